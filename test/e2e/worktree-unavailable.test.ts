// A worktree child's changes made unreadable the way a user could: its worktree removed by hand
// while it ran, its ref deleted by hand after, or its repository moved away. Real git, a real Pi session, the faux model: the
// run's result stands, inspect says what happened, apply is a typed error, and nothing is lost.
import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fauxAssistantMessage, fauxText, fauxToolCall, type FauxResponseStep } from "@earendil-works/pi-ai";
import { afterAll, beforeAll, expect, test } from "vitest";
import type { RunView } from "../../src/contract/run-schema.ts";
import { startPiSession, type PiTestSession } from "../support/pi-session.ts";
import { callForReceipt } from "../support/receipts.ts";
import { gitIn, makeRepo, worktreeCount, writeIn } from "../support/git-repo.ts";

let pi: PiTestSession;
let root: string;

beforeAll(async () => {
  root = makeRepo({ ".gitignore": ".agent/\n.flow-home/\n", "shared.txt": "committed\n" });
  writeIn(root, { "shared.txt": "the user's uncommitted edit\n", "notes.txt": "untracked notes\n" });
  // A cap of 3 files on what a child keeps (the user's setting; every other child here writes one file).
  pi = await startPiSession({ cwd: root, settings: { flow: { isolation: { maxKeptFiles: 3 } } } });
});
afterAll(() => pi.dispose());

type Envelope = { ok: boolean; data: { results?: { runId: string; status: string; files?: string[] }[]; page?: { text: string } } | null; error?: { code: string; message: string } };
const runs = async (args: Record<string, unknown>): Promise<Envelope> => (await pi.callTool("external_runs", args)).structuredContent as Envelope;

const writes = (path: string): FauxResponseStep => fauxAssistantMessage([fauxToolCall("write", { path, content: `${path} by the child\n` })], { stopReason: "toolUse" });
const done = fauxAssistantMessage([fauxText("done")]);

async function worktreeChild(description: string, children: FauxResponseStep[]): Promise<RunView> {
  const { receipt, run } = await callForReceipt(pi, "external_delegate", { role: "worker", description, prompt: description, context: { mode: "none" }, isolation: "worktree" }, { children });
  expect(receipt.ok).toBe(true);
  return run!;
}

/** What the user's working tree holds, beside what the child never got to write there. */
function userFilesIntact(): void {
  expect(readFileSync(join(root, "shared.txt"), "utf8")).toBe("the user's uncommitted edit\n");
  expect(readFileSync(join(root, "notes.txt"), "utf8")).toBe("untracked notes\n");
  expect(gitIn(root, "diff", "--cached", "--name-only")).toBe(""); // nothing staged
}

test("a ref deleted by hand, or the repository moved away: apply is run_unavailable and changes nothing, the patch view still shows the changes, and restoring the ref makes them applicable", async () => {
  const run = await worktreeChild("write kept.txt", [writes("kept.txt"), done]);
  expect(run.changes).toEqual({ files: 1, insertions: 1, deletions: 0 });
  const ref = `refs/pi-flow/${run.runId}`;
  const commit = gitIn(root, "rev-parse", ref);
  gitIn(root, "update-ref", "-d", ref); // by hand

  const refused = await runs({ action: "apply", runIds: [run.runId] });
  expect(refused).toMatchObject({ ok: false, data: null, error: { code: "run_unavailable" } });
  expect(refused.error!.message).toContain(`${ref} is no longer in its repository`);
  expect(existsSync(join(root, "kept.txt"))).toBe(false);
  userFilesIntact();

  // The repository gone (its .git moved away by hand) is refused the same way, saying so.
  renameSync(join(root, ".git"), join(root, ".git-away"));
  try {
    const gone = await runs({ action: "apply", runIds: [run.runId] });
    expect(gone).toMatchObject({ ok: false, data: null, error: { code: "run_unavailable" } });
    expect(gone.error!.message).toContain("its repository can no longer be read");
  } finally {
    renameSync(join(root, ".git-away"), join(root, ".git"));
  }

  // Nothing of the evidence was lost: the patch view pages the changes, and the ref restored applies them.
  const patch = await runs({ action: "inspect", runIds: [run.runId], view: "patch" });
  expect(patch.data!.page!.text).toContain("+kept.txt by the child");
  gitIn(root, "update-ref", ref, commit);
  expect((await runs({ action: "apply", runIds: [run.runId] })).data!.results).toEqual([{ runId: run.runId, status: "applied", files: ["kept.txt"] }]);
  expect(readFileSync(join(root, "kept.txt"), "utf8")).toBe("kept.txt by the child\n");
  userFilesIntact();
});

test("a worktree removed by hand while its child ran: the result stands, inspect shows changes_unavailable, apply is run_unavailable, and nothing is left behind", async () => {
  // The child writes, then, before it answers, someone deletes the flow home's worktrees by hand.
  const removeWorktrees: FauxResponseStep = () => {
    rmSync(join(pi.flowHome, "worktrees"), { recursive: true, force: true });
    return done;
  };
  const run = await worktreeChild("write lost.txt", [writes("lost.txt"), removeWorktrees]);
  expect(run).toMatchObject({ state: { outcome: "succeeded" }, output: { value: "done" } });
  expect(run.changes).toBeUndefined();
  expect(run.refs.diagnostics).toBeDefined();

  const diagnostics = await runs({ action: "inspect", runIds: [run.runId], view: "diagnostics" });
  expect(diagnostics.data!.page!.text).toMatch(/\[changes_unavailable\]: the child's changes could not be kept: its worktree was removed before the child settled/);

  const refused = await runs({ action: "apply", runIds: [run.runId] });
  expect(refused).toMatchObject({ ok: false, data: null, error: { code: "run_unavailable" } });
  expect(refused.error!.message).toContain("could not be kept when it settled (its worktree was removed before the child settled)");
  expect(existsSync(join(root, "lost.txt"))).toBe(false);
  userFilesIntact();
  expect(worktreeCount(root)).toBe(1); // its registration was pruned with it
  expect(gitIn(root, "for-each-ref", `refs/pi-flow/${run.runId}`)).toBe("");
});

test("discard of a run whose repository was deleted outright says discarded: the ref went with it, and nothing else is touched", async () => {
  // A second repository inside the project (ignored by the outer one), which the user later deletes.
  const inner = join(root, "inner");
  mkdirSync(inner);
  appendFileSync(join(root, ".git", "info", "exclude"), "inner/\n");
  gitIn(inner, "init", "-q", "-b", "main");
  writeIn(inner, { "README.md": "inner\n" });
  gitIn(inner, "add", "-A");
  gitIn(inner, "commit", "-q", "-m", "initial");

  const { receipt, run } = await callForReceipt(
    pi,
    "external_delegate",
    { role: "worker", description: "write in inner", prompt: "write", cwd: "inner", context: { mode: "none" }, isolation: "worktree" },
    { children: [writes("inner-change.txt"), done] },
  );
  expect(receipt.ok).toBe(true);
  expect(run!.changes).toEqual({ files: 1, insertions: 1, deletions: 0 });
  rmSync(inner, { recursive: true, force: true }); // by hand

  const discarded = await runs({ action: "discard", runIds: [run!.runId] });
  expect(discarded).toMatchObject({ ok: true, data: { results: [{ runId: run!.runId, status: "discarded" }] } });
  expect((await runs({ action: "discard", runIds: [run!.runId] })).data!.results).toEqual([{ runId: run!.runId, status: "nothing_to_apply" }]);
  userFilesIntact();
});

test("flow.isolation.maxKeptFiles in Pi's settings caps what a worktree child keeps: four files over a cap of three keep none, the receipt says so, and the worktree is left to copy them from", async () => {
  const { result, receipt, run } = await callForReceipt(
    pi,
    "external_delegate",
    { role: "worker", description: "write four files", prompt: "write", context: { mode: "none" }, isolation: "worktree" },
    { children: [writes("gen/1.txt"), writes("gen/2.txt"), writes("gen/3.txt"), writes("gen/4.txt"), done] },
  );
  expect(receipt).toMatchObject({ ok: true, warnings: expect.arrayContaining(["changes_too_large"]) });
  expect(run!.changes).toBeUndefined();
  const diagnostics = await runs({ action: "inspect", runIds: [run!.runId], view: "diagnostics" });
  expect(diagnostics.data!.page!.text).toContain("over the most pi-flow keeps of one child (1.0 GiB or 3 files)");
  expect(gitIn(root, "for-each-ref", `refs/pi-flow/${run!.runId}`)).toBe("");
  expect(result.text).toContain("Warning (changes_too_large)");
  expect(result.text).toContain("Its worktree is left as it was until a session start after this process has ended, to copy what you need from");
  const left = /Its worktree is left as the child left it, at (\S+): copy what you need/.exec(diagnostics.data!.page!.text)?.[1];
  expect(readFileSync(join(left!, "gen", "4.txt"), "utf8")).toBe("gen/4.txt by the child\n");
  userFilesIntact();
});
