import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterAll, describe, expect, test } from "vitest";
import { createCliHarnessByName } from "../../src/harnesses/cli/index.ts";
import { BUILTIN_ROLES } from "../../src/harnesses/roles.ts";
import type { ChildUsage } from "../../src/harnesses/types.ts";
import { pathWithFakes } from "../support/fake-cli.ts";
import { CliWorkspace } from "./cli-support.ts";

setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;
/** The heap in use once everything unreachable is gone. */
const heapUsed = (): number => {
  collectGarbage();
  collectGarbage();
  return process.memoryUsage().heapUsed;
};

const workspace = new CliWorkspace();
afterAll(() => workspace.dispose());

/**
 * Runs the fake's `many-ids` scenario, which names `calls` tool calls and more ids besides, then
 * cancels it; says how much more heap the host held, with the stream still open, after its last
 * call than after half of them. Held ids that grew with the stream grow that much between the two.
 */
async function heldWhileStreaming(harness: string, calls: number): Promise<{ grownBytes: number; usage: ChildUsage }> {
  const controller = new AbortController();
  const child = createCliHarnessByName(harness, { env: { ...process.env, PATH: pathWithFakes() } });
  let halfway = Number.NaN;
  let grownBytes = Number.NaN;
  let last: ChildUsage | undefined;
  const result = child.run({
    profile: BUILTIN_ROLES.worker!,
    task: { agent: "role:worker", description: "many ids" },
    prompt: "Call tools forever. [fake:many-ids]",
    cwd: workspace.cwd,
    loading: { projectTrusted: true, isolated: false },
    signal: controller.signal,
    onProgress: ({ usage }) => {
      last = usage;
      if (usage.toolCalls === calls / 2 && Number.isNaN(halfway)) halfway = heapUsed();
      if (usage.toolCalls !== calls || !Number.isNaN(grownBytes)) return;
      grownBytes = heapUsed() - halfway;
      controller.abort();
    },
    onOutput: () => undefined,
    onDiagnostic: () => undefined,
  });
  expect(await result).toMatchObject({ outcome: "cancelled" });
  return { grownBytes, usage: last! };
}

describe("a stream that names many ids", () => {
  // Before ids were forgotten, codex's last 20 000 ids of 256 characters held about 6 MB more, claude's
  // last 10 000 responses and their calls about 5 MB: a stream that ran long enough took the host's memory.
  test("codex: items are forgotten once completed and the oldest past the bound, and each call still counts once", async () => {
    const { grownBytes, usage } = await heldWhileStreaming("codex", 40_000);
    expect(usage.toolCalls).toBe(40_000);
    expect(grownBytes).toBeLessThan(2 * 1024 * 1024);
  });

  test("claude: calls are forgotten at their result, responses past the bound, and turns and calls still count once", async () => {
    const { grownBytes, usage } = await heldWhileStreaming("claude", 20_000);
    expect(usage).toMatchObject({ toolCalls: 20_000, turns: 20_000 });
    expect(grownBytes).toBeLessThan(2 * 1024 * 1024);
  });
});
