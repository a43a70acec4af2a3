import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ModelRuntime } from "@earendil-works/pi-coding-agent";
import { fauxAssistantMessage, fauxProvider, fauxText, fauxToolCall, type FauxResponseStep } from "@earendil-works/pi-ai";
import { afterEach, expect, test } from "vitest";
import { createPiHarness } from "../../src/harnesses/pi.ts";
import type { ChildRequest, WorktreeRoots } from "../../src/harnesses/types.ts";
import { gitIn, makeRepo } from "../support/git-repo.ts";

/**
 * A worktree pi child's write and edit, run by a real child AgentSession on Pi's faux provider in
 * real git worktrees: what they refuse when the user works in a linked worktree, whose git folder
 * lies outside their working tree (test/e2e/worktree-writers.test.ts drives the same through a delegation).
 */

const made: string[] = [];

/** A pi harness on Pi's faux provider answering with `steps`. */
async function fauxHarness(scratch: string, steps: FauxResponseStep[]) {
  const faux = fauxProvider({ provider: "faux", models: [{ id: "faux-1" }] });
  faux.setResponses(steps);
  const runtime = await ModelRuntime.create({ authPath: join(scratch, "auth.json"), modelsPath: null, refreshOnCreate: false });
  runtime.registerNativeProvider(faux.provider);
  await runtime.setRuntimeApiKey("faux", "test");
  return createPiHarness({ agentDir: join(scratch, "agent"), model: faux.getModel(), modelRuntime: runtime });
}

/** A worktree child working in `cwd` with Pi's file tools. */
const childRequest = (cwd: string, worktreeRoots: WorktreeRoots, isolated = true): ChildRequest => ({
  profile: { name: "worker", description: "w", systemPrompt: "You work.", tools: ["read", "write", "edit"], defaultContext: { mode: "none" }, source: "builtin" },
  task: { agent: "role:worker", description: "files" },
  prompt: "Write.",
  cwd,
  worktreeRoots,
  loading: { projectTrusted: true, isolated },
  signal: new AbortController().signal,
  onProgress: () => {},
  onOutput: () => {},
  onDiagnostic: () => {},
});
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

test("a worktree child writes neither the user's git folder (their hooks) nor their linked checkout, and still writes its own worktree", async () => {
  const main = makeRepo({ "a.txt": "a\n" });
  const scratch = realpathSync(mkdtempSync(join(tmpdir(), "pi-flow-files-")));
  made.push(main, scratch);
  const user = join(scratch, "user");
  const child = join(scratch, "child");
  gitIn(main, "worktree", "add", "-q", "--detach", user);
  gitIn(main, "worktree", "add", "-q", "--detach", child);
  const gitDir = join(main, ".git");
  const hook = join(gitDir, "hooks", "pre-commit");

  const results: { text: string; isError: boolean }[] = [];
  const step: FauxResponseStep = (context) => {
    const answers = context.messages.filter((m) => m.role === "toolResult");
    if (answers.length > 0) {
      results.push(...answers.map((m) => ({ text: m.content.map((part) => (part.type === "text" ? part.text : "")).join(""), isError: m.isError })));
      return fauxAssistantMessage([fauxText("done")]);
    }
    return fauxAssistantMessage(
      [
        fauxToolCall("write", { path: hook, content: "#!/bin/sh\necho owned\n" }),
        fauxToolCall("edit", { path: join(user, "a.txt"), edits: [{ oldText: "a", newText: "owned" }] }),
        fauxToolCall("write", { path: "own.txt", content: "mine\n" }),
      ],
      { stopReason: "toolUse" },
    );
  };
  const harness = await fauxHarness(scratch, [step, step]);
  const result = await harness.run(childRequest(child, { worktree: child, repository: user, gitDir }));

  expect(result).toMatchObject({ outcome: "succeeded", value: "done" });
  expect(existsSync(hook)).toBe(false);
  expect(readFileSync(join(user, "a.txt"), "utf8")).toBe("a\n");
  expect(readFileSync(join(child, "own.txt"), "utf8")).toBe("mine\n");
  expect(results.map((entry) => entry.isError)).toEqual([true, true, false]);
  expect(results[0]!.text).toContain(`is in the user's git folder (${gitDir})`);
  expect(results[1]!.text).toContain(`Use ${join(child, "a.txt")} instead.`);
});

test("an extension's own write (a remote or sandboxed one of the user's) stays the worktree child's: pi-flow does not replace it", async () => {
  const main = makeRepo({ "a.txt": "a\n" });
  const scratch = realpathSync(mkdtempSync(join(tmpdir(), "pi-flow-files-")));
  made.push(main, scratch);
  const child = join(scratch, "child");
  gitIn(main, "worktree", "add", "-q", "--detach", child);
  mkdirSync(join(child, ".pi", "extensions"), { recursive: true });
  writeFileSync(
    join(child, ".pi", "extensions", "own-write.ts"),
    [
      "export default function (pi) {",
      "  pi.registerTool({",
      '    name: "write", label: "write", description: "A remote write.",',
      '    parameters: { type: "object", properties: { path: { type: "string" }, content: { type: "string" } }, required: ["path", "content"] },',
      '    async execute() { return { content: [{ type: "text", text: "the remote wrote it" }], details: undefined }; },',
      "  });",
      "}",
    ].join("\n"),
  );
  const results: string[] = [];
  const step: FauxResponseStep = (context) => {
    const answers = context.messages.filter((m) => m.role === "toolResult");
    if (answers.length > 0) {
      results.push(...answers.map((m) => m.content.map((part) => (part.type === "text" ? part.text : "")).join("")));
      return fauxAssistantMessage([fauxText("done")]);
    }
    return fauxAssistantMessage([fauxToolCall("write", { path: join(main, "a.txt"), content: "x\n" })], { stopReason: "toolUse" });
  };
  const harness = await fauxHarness(scratch, [step, step]);
  const result = await harness.run(childRequest(child, { worktree: child, repository: main, gitDir: join(main, ".git") }, false));
  expect(result).toMatchObject({ outcome: "succeeded", value: "done" });
  expect(results).toEqual(["the remote wrote it"]);
});
