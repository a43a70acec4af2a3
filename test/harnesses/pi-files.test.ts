import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ModelRuntime } from "@earendil-works/pi-coding-agent";
import { fauxAssistantMessage, fauxProvider, fauxText, fauxToolCall, type FauxResponseStep } from "@earendil-works/pi-ai";
import { afterEach, expect, test } from "vitest";
import { createPiHarness } from "../../src/harnesses/pi.ts";
import { gitIn, makeRepo } from "../support/git-repo.ts";

/**
 * A worktree pi child's write and edit, run by a real child AgentSession on Pi's faux provider in
 * real git worktrees: what they refuse when the user works in a linked worktree, whose git folder
 * lies outside their working tree (test/e2e/worktree-writers.test.ts drives the same through a delegation).
 */

const made: string[] = [];
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
  const faux = fauxProvider({ provider: "faux", models: [{ id: "faux-1" }] });
  faux.setResponses([step, step]);
  const runtime = await ModelRuntime.create({ authPath: join(scratch, "auth.json"), modelsPath: null, refreshOnCreate: false });
  runtime.registerNativeProvider(faux.provider);
  await runtime.setRuntimeApiKey("faux", "test");
  const harness = createPiHarness({ agentDir: join(scratch, "agent"), model: faux.getModel(), modelRuntime: runtime });
  const result = await harness.run({
    profile: { name: "worker", description: "w", systemPrompt: "You work.", tools: ["read", "write", "edit"], defaultContext: { mode: "none" }, source: "builtin" },
    task: { agent: "role:worker", description: "files" },
    prompt: "Write.",
    cwd: child,
    worktreeRoots: { worktree: child, repository: user, gitDir },
    loading: { projectTrusted: true, isolated: true },
    signal: new AbortController().signal,
    onProgress: () => {},
    onOutput: () => {},
    onDiagnostic: () => {},
  });

  expect(result).toMatchObject({ outcome: "succeeded", value: "done" });
  expect(existsSync(hook)).toBe(false);
  expect(readFileSync(join(user, "a.txt"), "utf8")).toBe("a\n");
  expect(readFileSync(join(child, "own.txt"), "utf8")).toBe("mine\n");
  expect(results.map((entry) => entry.isError)).toEqual([true, true, false]);
  expect(results[0]!.text).toContain(`is in the user's git folder (${gitDir})`);
  expect(results[1]!.text).toContain(`Use ${join(child, "a.txt")} instead.`);
});
