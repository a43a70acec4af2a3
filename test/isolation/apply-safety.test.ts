import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { applyChanges } from "../../src/isolation/apply.ts";
import { readChangeRecord } from "../../src/isolation/change-record.ts";
import { finishIsolation, isolationWorktree, startIsolation } from "../../src/isolation/child-isolation.ts";
import type { RunFiles } from "../../src/runs/index.ts";
import { patchText, readChanges } from "../../src/isolation/changes.ts";
import { cleanupIsolation } from "../../src/isolation/cleanup.ts";
import { openRepository } from "../../src/isolation/repository.ts";
import { applyPatch, worktreePatch } from "../../src/isolation/worktree-patch.ts";
import { createIsolation, settleIsolation } from "../../src/isolation/worktree.ts";
import { gitIn, makeRepo, writeIn } from "../support/git-repo.ts";

const home = realpathSync(mkdtempSync(join(tmpdir(), "pi-flow-home-")));
let next = 0;
const runId = () => `r-safe${String(next++).padStart(4, "0")}`;
const IGNORED_IN_THE_WAY = "files or folders git ignores in the working tree (the user's own) in the way, which an apply never overwrites";

describe("applying a child's changes never overwrites a file the user's tree holds but git ignores", () => {
  it("a child that un-ignores a file and writes it conflicts instead of overwriting the user's ignored file", async () => {
    const root = makeRepo({ ".gitignore": ".env\n", "a.txt": "a\n" });
    writeIn(root, { ".env": "USER_SECRET=keep me\n" });
    const isolation = await createIsolation(await openRepository(root), runId(), home);
    writeIn(isolation.path, { ".gitignore": "", ".env": "CHILD=1\n" });
    await settleIsolation(isolation, home);
    const applied = await applyChanges(await openRepository(root), isolation.runId);
    expect(readFileSync(join(root, ".env"), "utf8")).toBe("USER_SECRET=keep me\n");
    expect(applied).toEqual({ status: "conflict", files: [".env"], reason: IGNORED_IN_THE_WAY });
    expect(readFileSync(join(root, ".gitignore"), "utf8")).toBe(".env\n"); // nothing changed
  });

  it("a child's file where the user has an ignored folder conflicts instead of deleting the folder", async () => {
    const root = makeRepo({ ".gitignore": "build/\n", "a.txt": "a\n" });
    writeIn(root, { "build/out.bin": "the user's build\n" });
    const isolation = await createIsolation(await openRepository(root), runId(), home);
    writeIn(isolation.path, { ".gitignore": "", build: "a file now\n" });
    await settleIsolation(isolation, home);
    const applied = await applyChanges(await openRepository(root), isolation.runId);
    expect(readFileSync(join(root, "build/out.bin"), "utf8")).toBe("the user's build\n");
    expect(applied).toEqual({ status: "conflict", files: ["build"], reason: IGNORED_IN_THE_WAY });
  });

  it("a child's file under a name the user has as an ignored file conflicts instead of deleting that file", async () => {
    const root = makeRepo({ ".gitignore": "cache\n", "a.txt": "a\n" });
    writeIn(root, { cache: "the user's cache\n" });
    const isolation = await createIsolation(await openRepository(root), runId(), home);
    writeIn(isolation.path, { ".gitignore": "", "cache/x.txt": "x\n" });
    await settleIsolation(isolation, home);
    const applied = await applyChanges(await openRepository(root), isolation.runId);
    expect(statSync(join(root, "cache")).isFile()).toBe(true);
    expect(readFileSync(join(root, "cache"), "utf8")).toBe("the user's cache\n");
    expect(applied).toEqual({ status: "conflict", files: ["cache/x.txt"], reason: IGNORED_IN_THE_WAY });
  });
});

describe("a repository on a file system that ignores case (core.ignorecase)", () => {
  it("a child's file whose name differs only in case from the user's (kept where case counts: a Linux worker) conflicts instead of overwriting it", async () => {
    const root = makeRepo({ "README.md": "the user's readme\n" });
    const isolation = await createIsolation(await openRepository(root), runId(), home);
    writeIn(isolation.path, { "readme.md": "the child's readme\n", "new.txt": "n\n" });
    await settleIsolation(isolation, home);
    gitIn(root, "config", "core.ignorecase", "true"); // as git sets it on macOS and Windows
    const applied = await applyChanges(await openRepository(root), isolation.runId);
    expect(applied).toEqual({
      status: "conflict",
      files: ["readme.md"],
      reason: "names that differ only in case from other files, which this repository's file system takes for the same file (core.ignorecase): one would overwrite the other",
    });
    expect(existsSync(join(root, "new.txt"))).toBe(false); // nothing written
    gitIn(root, "config", "core.ignorecase", "false"); // where case counts, both names land
    expect(await applyChanges(await openRepository(root), isolation.runId)).toEqual({ status: "applied", files: ["new.txt", "readme.md"] });
    expect(readFileSync(join(root, "README.md"), "utf8")).toBe("the user's readme\n");
  });
});

describe("a child's changes as a patch, whatever the user's git config says about diffs", () => {
  it("a global diff.external (difftastic, say) and diff.noprefix change neither the patch view nor the patch a cassette keeps and replays", async () => {
    const root = makeRepo({ "src/a.txt": "one\n" });
    const proof = join(home, "external-diff-ran");
    const config = join(home, "gitconfig");
    writeFileSync(config, `[diff]\n\tnoprefix = true\n\texternal = "touch ${proof}; true"\n`);
    const before = process.env.GIT_CONFIG_GLOBAL;
    process.env.GIT_CONFIG_GLOBAL = config;
    try {
      const recorded = await createIsolation(await openRepository(root), runId(), home);
      writeIn(recorded.path, { "src/a.txt": "two\n" });
      const patch = await worktreePatch(recorded);
      await settleIsolation(recorded, home);
      const kept = await readChanges(root, recorded.runId);
      const view = await patchText(root, kept!.base, kept!.commit);
      for (const text of [patch!.toString("utf8"), view]) expect(text).toContain("diff --git a/src/a.txt b/src/a.txt\n");
      const replayed = await createIsolation(await openRepository(root), runId(), home);
      expect(await applyPatch(replayed, patch!)).toEqual({ ok: true });
      expect(readFileSync(join(replayed.path, "src/a.txt"), "utf8")).toBe("two\n");
      expect(existsSync(join(replayed.path, "a.txt"))).toBe(false);
      await settleIsolation(replayed, home);
      expect(existsSync(proof)).toBe(false);
    } finally {
      if (before === undefined) delete process.env.GIT_CONFIG_GLOBAL;
      else process.env.GIT_CONFIG_GLOBAL = before;
    }
  });
});

describe("a conflict names the user's paths", () => {
  it("a child that made a file where the user keeps a folder of their own conflicts naming that path, not git's renamed copy of it", async () => {
    const root = makeRepo({ "d/x.txt": "x\n" });
    const isolation = await createIsolation(await openRepository(root), runId(), home);
    rmSync(join(isolation.path, "d"), { recursive: true });
    writeIn(isolation.path, { d: "a file now\n" });
    await settleIsolation(isolation, home);
    writeIn(root, { "d/mine.txt": "the user's new file\n" });
    expect(await applyChanges(await openRepository(root), isolation.runId)).toEqual({ status: "conflict", files: ["d"] });
    expect(readFileSync(join(root, "d/mine.txt"), "utf8")).toBe("the user's new file\n");
  });
});

describe("a child that writes a large binary file", () => {
  it("keeps its changes, and its patch view a note, without reading a patch over the patch view's cap into memory", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const runDir = realpathSync(mkdtempSync(join(tmpdir(), "pi-flow-run-")));
    const files = { changes: join(runDir, "changes.json"), patch: join(runDir, "patch.diff") } as RunFiles;
    // The cap is 32 MiB (MAX_PATCH_VIEW_BYTES); a smaller one behaves the same, without writing 28 MiB.
    const pending = startIsolation(await openRepository(root), runId(), home, { patchViewMaxBytes: 64 * 1024 });
    const worktree = await isolationWorktree(pending);
    // Random bytes do not compress: their git binary patch is about 1.27 times their size, over the cap.
    writeFileSync(join(worktree.path, "big.bin"), randomBytes(56 * 1024));
    const diagnostics: string[] = [];
    expect(await finishIsolation(pending, files, home, { appendDiagnostic: (entry) => diagnostics.push(entry.message) })).toEqual({ files: 1, insertions: 0, deletions: 0 });
    expect(diagnostics).toEqual([]);
    expect(readFileSync(files.patch, "utf8")).toBe("The patch is too large to show (it is over 64 KiB); the changes are kept and can be applied.\n");
    expect(readChangeRecord(files)?.state).toBe("kept"); // applicable: huge-patch.large.ts applies one over 32 MiB
    for (const dir of [root, runDir]) rmSync(dir, { recursive: true, force: true });
  });
});

describe("a worktree writer's patch for a cassette", () => {
  it("is read though the child git-initialised a folder without a commit, which it leaves out", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const isolation = await createIsolation(await openRepository(root), runId(), home);
    writeIn(isolation.path, { "a.txt": "the child's\n", "crate/src/main.rs": "fn main() {}\n" });
    gitIn(join(isolation.path, "crate"), "init", "-q");
    const patch = (await worktreePatch(isolation))!.toString("utf8");
    expect(patch).toContain("diff --git a/a.txt b/a.txt\n");
    expect(patch).not.toContain("crate");
    await settleIsolation(isolation, home);
  });
});

describe("a user's edits git is told not to look at", () => {
  for (const bit of ["--assume-unchanged", "--skip-worktree"]) {
    it(`an uncommitted edit of a ${bit} file (local config kept out of commits) is merged with, never overwritten`, async () => {
      const root = makeRepo({ "config.yml": "port: 1\nhost: a\n", "a.txt": "a\n" });
      gitIn(root, "update-index", bit, "config.yml");
      writeIn(root, { "config.yml": "port: 1\nhost: a\nsecret: mine\n" });
      const isolation = await createIsolation(await openRepository(root), runId(), home);
      writeIn(isolation.path, { "config.yml": "port: 2\nhost: a\nsecret: mine\n" });
      await settleIsolation(isolation, home);
      writeIn(root, { "config.yml": "port: 1\nhost: a\nsecret: mine, edited since\n" });
      const applied = await applyChanges(await openRepository(root), isolation.runId);
      expect(gitIn(root, "ls-files", "-v", "config.yml")[0]).toBe(bit === "--skip-worktree" ? "S" : "h"); // the user's index keeps its bit
      expect(readFileSync(join(root, "config.yml"), "utf8")).toBe(applied.status === "applied" ? "port: 2\nhost: a\nsecret: mine, edited since\n" : "port: 1\nhost: a\nsecret: mine, edited since\n");
    });
  }
});

describe("crash cleanup and a second flow home", () => {
  it("a session with another flow home (another PI_FLOW_HOME or agent dir) in the same repository leaves this home's kept changes alone", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const mine = realpathSync(mkdtempSync(join(tmpdir(), "pi-flow-home-")));
    const other = realpathSync(mkdtempSync(join(tmpdir(), "pi-flow-home-")));
    const isolation = await createIsolation(await openRepository(root), runId(), mine);
    mkdirSync(join(mine, "projects", "p", "sessions", "s", "runs", isolation.runId), { recursive: true });
    writeIn(isolation.path, { "a.txt": "the child's\n" });
    await settleIsolation(isolation, mine);
    mkdirSync(join(other, "worktrees"), { recursive: true }); // the other home has isolated children before
    expect((await cleanupIsolation(other, root)).droppedRefs).toEqual([]);
    expect(await readChanges(root, isolation.runId)).not.toBeNull();
    // This home's own run, pruned by retention, still has its ref dropped by this home.
    rmSync(join(mine, "projects"), { recursive: true });
    expect((await cleanupIsolation(mine, root)).droppedRefs).toEqual([isolation.runId]);
    expect(await readChanges(root, isolation.runId)).toBeNull();
  });
});

describe("a file the user saves while an apply merges", () => {
  it("is never overwritten with the merge of its older text: the apply is a conflict naming it and writes nothing", async () => {
    const root = makeRepo({ "a.txt": "one\ntwo\nthree\n", "b.txt": "b\n" });
    const isolation = await createIsolation(await openRepository(root), runId(), home);
    writeIn(isolation.path, { "a.txt": "one\ntwo\nTHREE\n", "b.txt": "child b\n" });
    await settleIsolation(isolation, home);
    // The editor saves a.txt after the apply read the tree and merged, just before it writes.
    const saved = async () => writeIn(root, { "a.txt": "ONE, saved by the editor\ntwo\nthree\n" });
    const applied = await applyChanges(await openRepository(root), isolation.runId, { beforeWriting: saved });
    expect(applied).toEqual({ status: "conflict", files: ["a.txt"] });
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("ONE, saved by the editor\ntwo\nthree\n");
    expect(readFileSync(join(root, "b.txt"), "utf8")).toBe("b\n");
    // Applied again, it merges with the saved text.
    expect(await applyChanges(await openRepository(root), isolation.runId)).toEqual({ status: "applied", files: ["a.txt", "b.txt"] });
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("ONE, saved by the editor\ntwo\nTHREE\n");
  });
});

describe("a file name that is not UTF-8", () => {
  it("kept from a child's worktree, is a conflict at apply that names it and writes nothing, never an apply git stops half way", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const repo = await openRepository(root);
    const child = await createIsolation(repo, "r-latin1name", home);
    writeFileSync(join(child.path, "a.txt"), "the child's\n");
    writeFileSync(Buffer.concat([Buffer.from(`${child.path}/caf`), Buffer.from([0xe9]), Buffer.from(".txt")]), "latin-1\n");
    expect(await settleIsolation(child, home)).toMatchObject({ files: 2 });
    const outcome = await applyChanges(repo, child.runId);
    expect(outcome).toMatchObject({ status: "conflict", files: ["caf\uFFFD.txt"], reason: expect.stringContaining("names that are not UTF-8") });
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("a\n");
    expect(gitIn(root, "status", "--porcelain")).toBe("");
  });
});
