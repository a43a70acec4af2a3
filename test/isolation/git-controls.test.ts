// What a worktree child's run is told changed in the git folder every worktree shares
// (src/isolation/git-controls.ts): real files, each kind of change, and a config grown huge; and
// those files replaced with FIFOs, which git would wait on forever (src/isolation/git-files.ts).
import { execFileSync } from "node:child_process";
import { once } from "node:events";
import { appendFileSync, createReadStream, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { applyChanges } from "../../src/isolation/apply.ts";
import { finishIsolation, isolationWorktree, startIsolation } from "../../src/isolation/child-isolation.ts";
import { cleanupIsolation } from "../../src/isolation/cleanup.ts";
import { changedControls, gitControls } from "../../src/isolation/git-controls.ts";
import { runGit } from "../../src/isolation/git.ts";
import { openRepository } from "../../src/isolation/repository.ts";
import { createIsolation, restoreCommonDir, settleIsolation } from "../../src/isolation/worktree.ts";
import { openRunStore, RunRegistry, runFiles } from "../../src/runs/index.ts";
import { gitIn, makeRepo } from "../support/git-repo.ts";

const dir = mkdtempSync(join(tmpdir(), "git-controls-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("a changed config, a hook added, attributes removed and alternates added are each named; an unchanged folder names nothing", async () => {
  mkdirSync(join(dir, "hooks"));
  mkdirSync(join(dir, "info"));
  writeFileSync(join(dir, "config"), "[core]\n\tbare = false\n");
  writeFileSync(join(dir, "info/attributes"), "* -text\n");
  const before = await gitControls(dir);
  expect(changedControls(before, await gitControls(dir))).toEqual([]);
  // The same size: only the contents differ.
  writeFileSync(join(dir, "config"), "[core]\n\tbare = fals3\n");
  writeFileSync(join(dir, "hooks/post-checkout"), "#!/bin/sh\n", { mode: 0o755 });
  rmSync(join(dir, "info/attributes"));
  mkdirSync(join(dir, "objects/info"), { recursive: true });
  writeFileSync(join(dir, "objects/info/alternates"), "/tmp/the-child's-objects\n");
  expect(changedControls(before, await gitControls(dir))).toEqual(["config", "hooks/post-checkout", "info/attributes", "objects/info/alternates"]);
});

test("a config a child grew past 1 MiB is noticed without being read, and so is its next change", async () => {
  writeFileSync(join(dir, "config"), `[alias]\n${"\tx = !true\n".repeat(120_000)}`);
  const grown = await gitControls(dir);
  expect(grown.get("config")).toMatch(/^\d+:\d+:\d+$/); // size and time, not a hash of its contents
  appendFileSync(join(dir, "config"), "[core]\n\thooksPath = /tmp/elsewhere\n");
  expect(changedControls(grown, await gitControls(dir))).toEqual(["config"]);
});

test("a hooks folder a child filled with thousands of files is named as one entry, without a stat of each", async () => {
  const before = await gitControls(dir);
  for (let i = 0; i < 300; i++) writeFileSync(join(dir, "hooks", `flood-${i}`), "");
  const after = await gitControls(dir);
  expect([...after.keys()].filter((name) => name.startsWith("hooks/"))).toEqual(["hooks/"]);
  expect(changedControls(before, after)).toContain("hooks/");
});

// A FIFO in place of a file git opens first makes every git wait for a writer forever: pi-flow's
// own git (a settle, an apply) refuses, naming the file, instead of hanging the session.
const home = realpathSync(mkdtempSync(join(tmpdir(), "pi-flow-home-")));
afterAll(() => rmSync(home, { recursive: true, force: true }));

/** Puts a FIFO at `path` (the file moved aside) while `use` runs, then the file back. */
async function withFifoAt<T>(path: string, use: () => Promise<T>): Promise<T> {
  const aside = `${path}.aside`;
  if (existsSync(path)) renameSync(path, aside);
  execFileSync("mkfifo", [path]);
  try {
    return await use();
  } finally {
    rmSync(path);
    if (existsSync(aside)) renameSync(aside, path);
  }
}

test("a worktree child that replaces the shared config, HEAD, packed-refs, index or attributes with a FIFO, or names one in the config: settle, apply and every git pi-flow runs refuse naming it, and its fingerprint is taken unread", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  gitIn(root, "pack-refs", "--all");
  const repo = await openRepository(root);
  const child = await createIsolation(repo, "r-fifo00001", home);
  writeFileSync(join(child.path, "a.txt"), "the child's\n");
  const config = join(repo.commonDir, "config");
  await withFifoAt(config, async () => {
    expect(changedControls(child.controls, await gitControls(repo.commonDir))).toEqual(["config"]);
    await expect(settleIsolation(child, home)).rejects.toMatchObject({ name: "GitFileUnreadable", file: config, code: "run_unavailable", message: expect.stringContaining("is a FIFO") });
  });
  expect(await settleIsolation(child, home)).toMatchObject({ files: 1 });
  const packedRefs = join(repo.commonDir, "packed-refs");
  await withFifoAt(packedRefs, () => expect(applyChanges(repo, child.runId)).rejects.toMatchObject({ file: packedRefs }));
  for (const name of ["HEAD", "index", "info/attributes", "info/exclude", "objects/info/alternates"]) {
    const path = join(repo.commonDir, name);
    await withFifoAt(path, () => expect(runGit(["status"], { cwd: root })).rejects.toMatchObject({ file: path }));
  }
  // A FIFO the config names, which git opens as it reads the config.
  for (const [i, key] of ["include.path", "includeIf.gitdir:/.path", "core.excludesFile"].entries()) {
    const named = join(home, `named-${i}`);
    execFileSync("mkfifo", [named]);
    gitIn(root, "config", key, named);
    await expect(runGit(["status"], { cwd: root })).rejects.toMatchObject({ file: named });
    rmSync(named); // first: git reading the config would wait on it
    gitIn(root, "config", "--unset", key);
  }
  expect(await applyChanges(repo, child.runId)).toMatchObject({ status: "applied" });
  expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("the child's\n");
});

test("a FIFO put in after the checks (a loose ref) stops git at the time limit, with an error saying so; so does a program git started that never ends, stopped with it", async () => {
  const root = makeRepo({ "a.txt": "a\n", ".gitattributes": "*.txt filter=slow\n" });
  const before = process.env.PI_FLOW_GIT_TIMEOUT_MS;
  process.env.PI_FLOW_GIT_TIMEOUT_MS = "200"; // git waits on the FIFO forever: only the limit ends it
  try {
    await withFifoAt(join(root, ".git/refs/heads/zz"), () =>
      expect(runGit(["for-each-ref"], { cwd: root })).rejects.toMatchObject({ name: "GitTimedOut", message: expect.stringContaining("git for-each-ref did not finish in 0.2 s") }),
    );
    // A filter of the caller's that never ends: git waits on it, and both are stopped. The filter
    // holds a FIFO open that this test reads: its end is the filter's death. The limit leaves git time to start it.
    process.env.PI_FLOW_GIT_TIMEOUT_MS = "1500";
    const held = join(mkdtempSync(join(tmpdir(), "pi-flow-held-")), "held");
    execFileSync("mkfifo", [held]);
    const reading = createReadStream(held);
    const ended = once(reading, "end");
    reading.resume();
    const filter = `filter.slow.clean=sh -c 'exec 3>${held}; exec sleep 1000'`;
    await expect(runGit(["-c", filter, "hash-object", "a.txt"], { cwd: root })).rejects.toMatchObject({ name: "GitTimedOut" });
    await ended; // never, were the filter left running
  } finally {
    if (before === undefined) delete process.env.PI_FLOW_GIT_TIMEOUT_MS;
    else process.env.PI_FLOW_GIT_TIMEOUT_MS = before;
  }
});

/** A worktree child whose bash runs `command` in its worktree, settled as the launcher settles it: its kept changes and its run's diagnostics. */
async function settledChild(root: string, command: string): Promise<{ runId: string; stats: unknown; diagnostics: string }> {
  const store = openRunStore({ home, cwd: root, sessionId: "s", registry: new RunRegistry() });
  const run = store.create({ kind: "agent", task: { description: "hostile git folder" }, background: false });
  const pending = startIsolation(await openRepository(root), run.runId, home);
  const worktree = await isolationWorktree(pending);
  execFileSync("bash", ["-c", command], { cwd: worktree.path });
  const files = runFiles(store.scope, run.runId);
  const stats = await finishIsolation(pending, files, home, run);
  return { runId: run.runId, stats, diagnostics: existsSync(files.diagnostics) ? readFileSync(files.diagnostics, "utf8") : "" };
}

test("a FIFO a worktree child's bash puts among the loose refs, the loose objects or a worktree's folder in the git folder: its settle, an apply's repository and a sibling's worktree refuse naming it, never waiting on it", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  const before = process.env.PI_FLOW_GIT_TIMEOUT_MS;
  process.env.PI_FLOW_GIT_TIMEOUT_MS = "20000"; // so a git that waits on one fails the test rather than hangs it
  try {
    const { stats, diagnostics } = await settledChild(root, 'echo child > a.txt && mkfifo "$(git rev-parse --git-common-dir)/refs/heads/zz"');
    expect(stats).toBeUndefined();
    const loose = join(root, ".git/refs/heads/zz");
    expect(diagnostics).toContain(`[changes_unavailable]: the child's changes could not be kept: git cannot be run in this repository: ${JSON.stringify(loose)} is a FIFO`);
    rmSync(loose);
    // A loose object git reads (the user's HEAD commit), and a worktree's own folder (its gitdir, which git worktree reads for every worktree).
    const repo = await openRepository(root);
    const child = await createIsolation(repo, "r-fifo00002", home);
    writeFileSync(join(child.path, "a.txt"), "the child's\n");
    const head = gitIn(root, "rev-parse", "HEAD");
    const object = join(repo.commonDir, "objects", head.slice(0, 2), head.slice(2));
    const gitdir = join(child.gitDir, "gitdir");
    for (const path of [object, gitdir]) {
      await withFifoAt(path, async () => {
        await expect(openRepository(root)).rejects.toMatchObject({ name: "GitFileUnreadable", file: path });
        await expect(createIsolation(repo, "r-fifo00003", home, child.base)).rejects.toMatchObject({ name: "GitFileUnreadable", file: path });
        await expect(settleIsolation(child, home)).rejects.toMatchObject({ name: "GitFileUnreadable", file: path });
      });
    }
    expect(await settleIsolation(child, home)).toMatchObject({ files: 1 });
    expect(await applyChanges(repo, child.runId)).toMatchObject({ status: "applied" });
  } finally {
    if (before === undefined) delete process.env.PI_FLOW_GIT_TIMEOUT_MS;
    else process.env.PI_FLOW_GIT_TIMEOUT_MS = before;
  }
});

test("a worktree child that makes the repository a partial clone whose promisor remote is an ext:: command, and a ref name a missing object: pi-flow's git fetches nothing and runs no command, and its changes are kept", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  const mark = join(home, "fetched-by-pi-flow");
  const { stats } = await settledChild(
    root,
    [
      "echo child > a.txt",
      "git config core.repositoryformatversion 1",
      "git config extensions.partialClone origin",
      "git config remote.origin.promisor true",
      `git config remote.origin.url "ext::sh -c touch% ${mark}"`,
      "git config protocol.ext.allow always",
      'echo 1234567890123456789012345678901234567890 > "$(git rev-parse --git-common-dir)/refs/heads/missing"',
    ].join(" && "),
  );
  expect(stats).toMatchObject({ files: 1 });
  expect(existsSync(mark)).toBe(false);
});

test("a worktree child that points its worktree's commondir at a repository of its own (a copy of the user's git folder): its changes are kept in the user's repository, and apply", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  const copy = join(mkdtempSync(join(tmpdir(), "pi-flow-other-")), "other.git");
  const { runId, stats } = await settledChild(root, `echo child > a.txt && cp -a "$(git rev-parse --git-common-dir)" ${copy} && echo ${copy} > "$(git rev-parse --git-dir)/commondir"`);
  expect(stats).toMatchObject({ files: 1 });
  expect(gitIn(root, "for-each-ref", "--format=%(refname)", "refs/pi-flow")).toBe(`refs/pi-flow/${runId}`);
  expect(execFileSync("git", ["for-each-ref", "--format=%(refname)", "refs/pi-flow"], { cwd: copy, encoding: "utf8" })).toBe("");
  expect(await applyChanges(await openRepository(root), runId)).toMatchObject({ status: "applied" });
  expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("child\n");
  // Rewritten again once the settle has begun (a process the child left running): git pinned to the worktree refuses to run.
  const child = await createIsolation(await openRepository(root), "r-commondir1", home);
  writeFileSync(join(child.gitDir, "commondir"), `${copy}\n`);
  await expect(runGit(["status"], { cwd: child.path, worktree: child })).rejects.toMatchObject({ name: "CommonDirMoved", code: "run_unavailable" });
  await settleIsolation(child, home);
});

test("a FIFO named .gitignore in a folder whose name is not UTF-8: removed before git reads the tree, and the child's changes are kept", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  const before = process.env.PI_FLOW_GIT_TIMEOUT_MS;
  process.env.PI_FLOW_GIT_TIMEOUT_MS = "20000"; // so a git that waits on it fails the test rather than hangs it
  try {
    const { stats, diagnostics } = await settledChild(root, "echo child > a.txt && mkdir $'d\\xff' && mkfifo $'d\\xff/.gitignore' && echo kept > $'d\\xff/b.txt'");
    expect(stats).toMatchObject({ files: 2 });
    expect(diagnostics).toContain("FIFOs or sockets the child left in its worktree are not kept");
    expect(diagnostics).toContain("d\uFFFD/.gitignore");
  } finally {
    if (before === undefined) delete process.env.PI_FLOW_GIT_TIMEOUT_MS;
    else process.env.PI_FLOW_GIT_TIMEOUT_MS = before;
  }
});

test("a worktree child that links a folder of the user's in among the worktrees' folders: crash cleanup's git worktree prune deletes none of its files, and the link is gone", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  const victim = mkdtempSync(join(tmpdir(), "pi-flow-users-folder-"));
  writeFileSync(join(victim, "precious.txt"), "the user's\n");
  const { stats } = await settledChild(root, `echo child > a.txt && ln -s ${victim} "$(git rev-parse --git-common-dir)/worktrees/linked"`);
  expect(stats).toMatchObject({ files: 1 });
  await cleanupIsolation(home, root);
  expect(readFileSync(join(victim, "precious.txt"), "utf8")).toBe("the user's\n");
  expect(existsSync(join(root, ".git/worktrees/linked"))).toBe(false);
});

test("a worktree child that replaces its worktree's own folder in the git folder with a link to a folder of the user's: putting commondir back writes nothing there", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  const child = await createIsolation(await openRepository(root), "r-adminlink1", home);
  const victim = mkdtempSync(join(tmpdir(), "pi-flow-users-folder-"));
  writeFileSync(join(victim, "commondir"), "the user's\n");
  renameSync(child.gitDir, `${child.gitDir}.aside`);
  execFileSync("ln", ["-s", victim, child.gitDir]);
  await restoreCommonDir(child.gitDir);
  expect(readFileSync(join(victim, "commondir"), "utf8")).toBe("the user's\n");
  rmSync(child.gitDir);
  renameSync(`${child.gitDir}.aside`, child.gitDir);
  await settleIsolation(child, home);
});
