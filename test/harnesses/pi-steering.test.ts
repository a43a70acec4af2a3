import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ModelRuntime } from "@earendil-works/pi-coding-agent";
import { fauxAssistantMessage, fauxProvider, fauxText, type FauxResponseStep } from "@earendil-works/pi-ai";
import { afterEach, describe, expect, test } from "vitest";
import { createPiHarness } from "../../src/harnesses/pi.ts";
import { SteeringInbox } from "../../src/harnesses/steering.ts";
import type { ChildRequest } from "../../src/harnesses/types.ts";
import { seenBy, type Seen } from "../support/children.ts";

/**
 * The pi harness takes steers through a real child AgentSession on Pi's faux provider: a message
 * sent before the session exists is held, then delivered when it is created, and every unread
 * steer goes into the same model request.
 */

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function piHarness(seen: Seen[]) {
  const faux = fauxProvider({ provider: "faux", models: [{ id: "faux-1" }] });
  const answer: FauxResponseStep = (context) => {
    seen.push(seenBy(context.messages));
    return fauxAssistantMessage([fauxText("answered")]);
  };
  faux.setResponses([answer, answer, answer]);
  const runtime = await ModelRuntime.create({ authPath: join(dir, "auth.json"), modelsPath: null, refreshOnCreate: false });
  runtime.registerNativeProvider(faux.provider);
  await runtime.setRuntimeApiKey("faux", "test");
  return createPiHarness({ agentDir: join(dir, "agent"), model: faux.getModel(), modelRuntime: runtime });
}

function request(steering: SteeringInbox): ChildRequest {
  return {
    profile: { name: "worker", description: "w", systemPrompt: "You work.", tools: ["read"], defaultContext: { mode: "none" }, source: "builtin" },
    task: { agent: "role:worker", description: "steering test" },
    prompt: "Write the notes.",
    cwd: dir,
    loading: { projectTrusted: true, isolated: false },
    signal: new AbortController().signal,
    onProgress: () => {},
    onOutput: () => {},
    onDiagnostic: () => {},
    steering,
  };
}

describe("steering the pi harness", () => {
  test("messages sent before the child's session exists are held, then all reach its first model request, in order", async () => {
    dir = mkdtempSync(join(tmpdir(), "pi-flow-steer-"));
    const seen: Seen[] = [];
    const harness = await piHarness(seen);
    const inbox = new SteeringInbox();
    for (const message of ["First steer.", "Second steer.", "Third steer."]) expect(inbox.send(message)).toBe(true);
    expect(inbox.attached).toBe(false);
    expect(inbox.unread).toEqual(["First steer.", "Second steer.", "Third steer."]);
    const result = await harness.run(request(inbox));
    expect(result).toMatchObject({ outcome: "succeeded", value: "answered" });
    // Coalesced: one model request read the prompt and every steer, not one request per steer.
    expect(seen).toHaveLength(1);
    const user = seen[0]!.user;
    expect(user.indexOf("Write the notes.")).toBeGreaterThanOrEqual(0);
    expect(user.indexOf("First steer.")).toBeGreaterThan(user.indexOf("Write the notes."));
    expect(user.indexOf("Second steer.")).toBeGreaterThan(user.indexOf("First steer."));
    expect(user.indexOf("Third steer.")).toBeGreaterThan(user.indexOf("Second steer."));
    // Settled: the inbox refuses later messages and holds nothing unread.
    expect(inbox.send("Too late.")).toBe(false);
    expect(inbox.unread).toEqual([]);
  });
});
