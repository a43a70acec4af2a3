// claude and codex children in their own worktree: fake executables record their cwd and argv in
// the directory they run in, so the record itself is part of the child's kept changes.
import { join } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { cliTask, pathWithFakes, type FakeRunRecord } from "../support/fake-cli.ts";
import { gitIn, makeRepo, worktreeCount, writeIn } from "../support/git-repo.ts";
import { startPiSession, type PiTestSession } from "../support/pi-session.ts";
import { callForReceipt } from "../support/receipts.ts";

let pi: PiTestSession;
let root: string;
beforeAll(async () => {
  root = makeRepo({ ".gitignore": ".agent/\n.flow-home/\n", "src/app.txt": "app\n" });
  writeIn(root, {
    ".pi/flow/roles/isolated-writer.md": "---\nharness: claude\nisolation: worktree\ntools: read, write, edit, bash\n---\nWrite what you are asked to.\n",
    ".pi/flow/roles/misplaced.md": "---\nisolation: elsewhere\n---\nWrite.\n",
  });
  pi = await startPiSession({ cwd: root, env: { PATH: pathWithFakes(), PI_FLOW_CLI_KILL_GRACE_MS: "300" } });
}, 60_000);
afterAll(() => pi?.dispose());

test.each(["claude", "codex"])('a %s child with isolation "worktree" runs in its worktree, in the parent\'s subdirectory', async (harness) => {
  const { receipt } = await callForReceipt(pi, "external_delegate", { ...cliTask(harness), isolation: "worktree", cwd: "src" });
  expect(receipt.ok, JSON.stringify(receipt.error)).toBe(true);
  const runId = receipt.data.run!.runId;
  const kept = gitIn(root, "ls-tree", "-r", "--name-only", `refs/pi-flow/${runId}`).split("\n").filter((path) => path.startsWith(`src/.fake-cli/${harness}-`));
  expect(kept).toHaveLength(1);
  const record = JSON.parse(gitIn(root, "show", `refs/pi-flow/${runId}:${kept[0]}`)) as FakeRunRecord;
  expect(record.cwd).toBe(join(pi.flowHome, "worktrees", record.cwd.split("/worktrees/")[1]!.split("/")[0]!, runId, "src"));
  expect(record.argv.length).toBeGreaterThan(0);
  expect(receipt.data.run!.changes).toMatchObject({ files: 1 });
  expect(worktreeCount(root)).toBe(1);
});

test("a role file may ask for isolation: worktree; any other value is configuration_invalid naming the file", async () => {
  const { receipt } = await callForReceipt(pi, "external_delegate", { ...cliTask("claude"), harness: undefined, role: "isolated-writer" });
  expect(receipt.ok, JSON.stringify(receipt.error)).toBe(true);
  const runId = receipt.data.run!.runId;
  expect(gitIn(root, "ls-tree", "-r", "--name-only", `refs/pi-flow/${runId}`)).toContain(".fake-cli/claude-");
  const refused = await callForReceipt(pi, "external_delegate", { ...cliTask("claude"), harness: undefined, role: "misplaced" });
  expect(refused.receipt).toMatchObject({ ok: false, data: { run: null }, error: { code: "configuration_invalid", message: "misplaced.md: isolation must be worktree." } });
});
