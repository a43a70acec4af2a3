/**
 * What a worker that takes a pi child over does with the session its first worker checkpointed:
 * a real child AgentSession on Pi's faux provider, a real file read by the child's `read` tool. The
 * first attempt's checkpoints are the entries the harness hands over; the second attempt is given
 * them as its saved session (as src/backends/child-workflow.ts does from pi_flow.child_sessions).
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ModelRuntime, type SessionEntry } from "@earendil-works/pi-coding-agent";
import { fauxAssistantMessage, fauxProvider, fauxText, fauxToolCall, type FauxResponseStep, type Message } from "@earendil-works/pi-ai";
import { afterEach, beforeEach, expect, test } from "vitest";
import { createPiHarness } from "../../src/harnesses/pi.ts";
import type { ChildDiagnostic, ChildRequest, SessionCheckpoint } from "../../src/harnesses/types.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "pi-flow-takeover-"));
  writeFileSync(join(dir, "notes.txt"), "the notes say 42\n");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** The model reads notes.txt in turn 1 and answers with what it read in turn 2; every request is kept. */
async function piHarness(requests: Message[][]) {
  const faux = fauxProvider({ provider: "faux", models: [{ id: "faux-1" }] });
  const step: FauxResponseStep = (context) => {
    requests.push([...context.messages]);
    const last = context.messages[context.messages.length - 1];
    if (last?.role !== "toolResult") return fauxAssistantMessage([fauxToolCall("read", { path: "notes.txt" }, { id: `call_${requests.length}` })], { stopReason: "toolUse" });
    const read = (last.content as { type: string; text?: string }[]).map((part) => part.text ?? "").join("").trim();
    return fauxAssistantMessage([fauxText(`answer: ${read}`)]);
  };
  faux.setResponses(Array.from({ length: 10 }, () => step));
  const runtime = await ModelRuntime.create({ authPath: join(dir, "auth.json"), modelsPath: null, refreshOnCreate: false });
  runtime.registerNativeProvider(faux.provider);
  await runtime.setRuntimeApiKey("faux", "test");
  return createPiHarness({ agentDir: join(dir, "agent"), model: faux.getModel(), modelRuntime: runtime });
}

function request(checkpoint: SessionCheckpoint, diagnostics: ChildDiagnostic[] = [], quotas?: ChildRequest["quotas"]): ChildRequest {
  return {
    profile: { name: "worker", description: "w", systemPrompt: "You work.", tools: ["read"], defaultContext: { mode: "none" }, source: "builtin" },
    task: { agent: "role:worker", description: "takeover test" },
    prompt: "Read the notes and say what they say.",
    cwd: dir,
    loading: { projectTrusted: true, isolated: false },
    signal: new AbortController().signal,
    onProgress: () => {},
    onOutput: () => {},
    onDiagnostic: (entry) => diagnostics.push(entry),
    checkpoint,
    ...(quotas ? { quotas } : {}),
  };
}

const roles = (entries: readonly SessionEntry[]) => entries.flatMap((entry) => (entry.type === "message" ? [entry.message.role] : []));

/** Runs the child once from the start, and returns every checkpoint it handed over. */
async function firstAttempt(): Promise<SessionEntry[][]> {
  const saves: SessionEntry[][] = [];
  const result = await (await piHarness([])).run(request({ save: (entries) => saves.push([...entries]) }));
  expect(result).toMatchObject({ outcome: "succeeded", value: "answer: the notes say 42" });
  return saves;
}

test("a pi child checkpoints its session once the prompt is in and after each whole turn", async () => {
  const saves = await firstAttempt();
  const shapes = saves.map((entries) => roles(entries).filter((role) => role !== "system").join(" "));
  expect(shapes).toContain("user");
  expect(shapes).toContain("user assistant toolResult");
  expect(shapes.at(-1)).toBe("user assistant toolResult assistant");
});

test("a child continued from its saved first turn asks the model only for turn 2, with turn 1 in its context, and its usage counts both turns once", async () => {
  const saves = await firstAttempt();
  const afterTurnOne = saves.find((entries) => roles(entries).at(-1) === "toolResult")!;
  const requests: Message[][] = [];
  const later: SessionEntry[][] = [];
  const result = await (await piHarness(requests)).run(request({ saved: afterTurnOne, save: (entries) => later.push([...entries]) }));
  expect(result).toMatchObject({ outcome: "succeeded", value: "answer: the notes say 42", usage: { turns: 2, toolCalls: 1 } });
  expect(result.usage.outputTokens).toBeGreaterThan(0);
  // One request: turn 2, which saw turn 1's tool call and its result; the file was not read again.
  expect(requests).toHaveLength(1);
  expect(requests[0]!.map((message) => message.role).filter((role) => (role as string) !== "system")).toEqual(["user", "assistant", "toolResult"]);
  // Its checkpoints go on from the saved session.
  expect(roles(later.at(-1)!).filter((role) => role !== "system")).toEqual(["user", "assistant", "toolResult", "assistant"]);
});

test("a child whose final answer was saved answers with it, and asks the model nothing", async () => {
  const saves = await firstAttempt();
  const requests: Message[][] = [];
  const result = await (await piHarness(requests)).run(request({ saved: saves.at(-1)!, save: () => {} }));
  expect(result).toMatchObject({ outcome: "succeeded", value: "answer: the notes say 42", usage: { turns: 2, toolCalls: 1 } });
  expect(requests).toEqual([]);
});

test("a saved turn cut off by its worker (an aborted answer) is dropped: the child asks for that turn again", async () => {
  const saves = await firstAttempt();
  const afterTurnOne = saves.find((entries) => roles(entries).at(-1) === "toolResult")!;
  const last = afterTurnOne.at(-1)!;
  const aborted = {
    type: "message",
    id: "cut0ff00",
    parentId: last.id,
    timestamp: new Date().toISOString(),
    message: { role: "assistant", content: [], stopReason: "aborted", api: "faux", provider: "faux", model: "faux-1", timestamp: Date.now(), usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } } },
  } as SessionEntry;
  const requests: Message[][] = [];
  const result = await (await piHarness(requests)).run(request({ saved: [...afterTurnOne, aborted], save: () => {} }));
  expect(result).toMatchObject({ outcome: "succeeded", value: "answer: the notes say 42", usage: { turns: 2, toolCalls: 1 } });
  expect(requests).toHaveLength(1);
});

test("the saved turns count against the child's quotas: maxTurns 1 with one turn saved stops it before turn 2", async () => {
  const saves = await firstAttempt();
  const afterTurnOne = saves.find((entries) => roles(entries).at(-1) === "toolResult")!;
  const requests: Message[][] = [];
  const result = await (await piHarness(requests)).run(request({ saved: afterTurnOne, save: () => {} }, [], { maxTurns: 1 }));
  expect(result).toMatchObject({ outcome: "failed", error: { message: expect.stringContaining("maxTurns (1)") } });
  expect(requests).toEqual([]);
});

test("a child stopped while its tool runs saves no checkpoint after the stop: the aborted tool's result is not handed over as if the tool had answered", async () => {
  const faux = fauxProvider({ provider: "faux", models: [{ id: "faux-1" }] });
  const started = join(dir, "started");
  faux.setResponses([fauxAssistantMessage([fauxToolCall("bash", { command: `touch '${started}'; sleep 30` }, { id: "call_1" })], { stopReason: "toolUse" }), fauxAssistantMessage([fauxText("never")])]);
  const runtime = await ModelRuntime.create({ authPath: join(dir, "auth.json"), modelsPath: null, refreshOnCreate: false });
  runtime.registerNativeProvider(faux.provider);
  await runtime.setRuntimeApiKey("faux", "test");
  const harness = createPiHarness({ agentDir: join(dir, "agent"), model: faux.getModel(), modelRuntime: runtime });
  const stop = new AbortController();
  const saves: SessionEntry[][] = [];
  const base = request({ save: (entries) => saves.push([...entries]) });
  const running = harness.run({ ...base, profile: { ...base.profile, tools: ["bash"] }, signal: stop.signal });
  while (!existsSync(started)) await new Promise((resolve) => setTimeout(resolve, 20));
  const savedBeforeStop = saves.length;
  stop.abort();
  expect((await running).outcome).toBe("cancelled");
  expect(saves.length).toBe(savedBeforeStop);
  expect(saves.every((entries) => !roles(entries).includes("toolResult"))).toBe(true);
});
