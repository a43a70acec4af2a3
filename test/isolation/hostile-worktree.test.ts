// What a hostile worktree child can do to its own worktree folder, from its bash: replace it (or a
// folder on the way to it) with a link to a folder of the user's. Real git, a real worktree
// child's settle.
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, lstatSync, mkdtempSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { expect, test } from "vitest";
import { finishIsolation, isolationWorktree, startIsolation, type PendingIsolation } from "../../src/isolation/child-isolation.ts";
import { openRepository } from "../../src/isolation/repository.ts";
import { readChangeRecord } from "../../src/isolation/change-record.ts";
import { applyChanges } from "../../src/isolation/apply.ts";
import { cleanupIsolation } from "../../src/isolation/cleanup.ts";
import { ownerFile, worktreesDir } from "../../src/isolation/worktree.ts";
import { openRunStore, RunRegistry, runFiles } from "../../src/runs/index.ts";
import { gitIn, makeRepo, worktreeCount, NO_STDIN } from "../support/git-repo.ts";

const home = realpathSync(mkdtempSync(join(tmpdir(), "pi-flow-home-")));

/** A folder of the user's the child should never have kept: a private key, and a `.git` file the child planted to pass for its worktree. */
function usersFolder(): string {
  const folder = realpathSync(mkdtempSync(join(tmpdir(), "pi-flow-ssh-")));
  writeFileSync(join(folder, "id_ed25519"), "-----BEGIN OPENSSH PRIVATE KEY-----\n");
  return folder;
}

/** A worktree child whose bash runs `command` (W: its worktree, G: its git folder), settled. */
async function childRuns(root: string, command: string, env: Record<string, string> = {}, options: Pick<PendingIsolation, "keptChangesMax"> = {}) {
  const store = openRunStore({ home, cwd: root, sessionId: "s", registry: new RunRegistry() });
  const run = store.create({ kind: "agent", task: { description: "hostile" }, background: false });
  const pending = startIsolation(await openRepository(root), run.runId, home, options);
  const worktree = await isolationWorktree(pending);
  execFileSync("bash", ["-c", command], { cwd: worktree.path, stdio: NO_STDIN, env: { ...process.env, ...env, W: worktree.path, G: worktree.gitDir } });
  const files = runFiles(store.scope, run.runId);
  const stats = await finishIsolation(pending, files, home, run);
  const diagnostics = existsSync(files.diagnostics) ? readFileSync(files.diagnostics, "utf8") : "";
  const kept = execFileSync("git", ["for-each-ref", `refs/pi-flow/${run.runId}`], { cwd: root, encoding: "utf8" });
  return { runId: run.runId, stats, diagnostics, kept, warnings: pending.warnings ?? [], record: readChangeRecord(files), worktree };
}

test("a child that replaced its worktree folder with a link to a folder of the user's has nothing of it kept, and nothing is removed through the link", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  const ssh = usersFolder();
  // The planted .git passes git's check that the folder is the worktree: `git worktree remove` would delete the folder's files.
  const child = await childRuns(root, 'rm -rf "$W" && ln -s "$S" "$W" && echo "gitdir: $G" > "$S/.git"', { S: ssh });
  expect(child.stats).toBeUndefined();
  expect(child.kept).toBe("");
  expect(child.diagnostics).toContain(`its worktree folder ${child.worktree.path} was replaced with a link to ${JSON.stringify(ssh)}`);
  expect(child.warnings).toContain("worktree_replaced");
  expect(child.record).toMatchObject({ state: "unavailable" });
  expect(readFileSync(join(ssh, "id_ed25519"), "utf8")).toBe("-----BEGIN OPENSSH PRIVATE KEY-----\n");
  expect(existsSync(child.worktree.path)).toBe(false); // the link itself is gone
  expect(worktreeCount(root)).toBe(1);
});

test("a child that replaced a folder on the way to its worktree with a link has nothing kept, and the folder it leads to stays", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  const elsewhere = usersFolder();
  // The project's worktrees folder moved away, and a link in its place to a folder holding one named as the child's worktree.
  const child = await childRuns(root, 'P="$(dirname "$W")" && mkdir "$S/$(basename "$W")" && cp "$S/id_ed25519" "$S/$(basename "$W")/" && echo "gitdir: $G" > "$S/$(basename "$W")/.git" && mv "$P" "$P.moved" && ln -s "$S" "$P"', { S: elsewhere });
  expect(child.kept).toBe("");
  expect(child.diagnostics).toContain(`a folder on the way to its worktree ${child.worktree.path} was replaced with a link`);
  expect(child.warnings).toContain("worktree_replaced");
  expect(readFileSync(join(elsewhere, child.runId.toString(), "id_ed25519"), "utf8")).toContain("PRIVATE KEY");
  expect(lstatSync(dirname(child.worktree.path)).isSymbolicLink()).toBe(true);
});

test("a child that moved a folder of the user's into its worktree's place (another folder, no link) has nothing of it kept, and it is not deleted", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  const ssh = usersFolder();
  const child = await childRuns(root, 'mv "$W" "$W.moved" && mv "$S" "$W" && echo "gitdir: $G" > "$W/.git"', { S: ssh });
  expect(child.kept).toBe("");
  expect(child.diagnostics).toContain(`its worktree folder ${child.worktree.path} was replaced with another folder`);
  expect(child.warnings).toContain("worktree_replaced");
  expect(readFileSync(join(child.worktree.path, "id_ed25519"), "utf8")).toContain("PRIVATE KEY"); // still there, to move back
  expect(worktreeCount(root)).toBe(1);
});

test("a folder inside the worktree replaced with a link is kept as that link, never as the files it leads to", async () => {
  const root = makeRepo({ "a.txt": "a\n", "sub/b.txt": "b\n" });
  const ssh = usersFolder();
  const child = await childRuns(root, 'rm -rf sub && ln -s "$S" sub', { S: ssh });
  expect(gitIn(root, "ls-tree", "-r", `refs/pi-flow/${child.runId}`)).toMatch(/^100644 blob \S+\ta\.txt\n120000 blob \S+\tsub$/);
  expect(child.warnings).not.toContain("worktree_replaced");
});

test("a child that leaves more than the cap in its worktree (bytes, or files) has none of it kept, its run names what it left, and its worktree is left to copy from", async () => {
  const max = { bytes: 1024 * 1024, files: 20 };
  // The base's own large file is no reason to refuse: only what the child added or changed counts.
  const root = makeRepo({ "a.txt": "a\n", "data/base.bin": Buffer.alloc(2 * 1024 * 1024) });
  const large = await childRuns(root, "echo edit > a.txt && head -c 3145728 /dev/zero > big.bin", {}, { keptChangesMax: max });
  expect(large.kept).toBe("");
  expect(large.warnings).toContain("changes_too_large");
  expect(large.record).toMatchObject({ state: "unavailable" });
  expect(large.diagnostics).toContain("over the most pi-flow keeps of one child (1.0 MiB or 20 files): none of its changes are kept");
  expect(large.diagnostics).toContain("The largest: big.bin (3.0 MiB)");
  // Not removed: what the child wrote (its edit of a.txt among it) is there to copy, until a session start after this process has ended.
  expect(large.diagnostics).toContain(`Its worktree is left as the child left it, at ${large.worktree.path}: copy what you need from there`);
  expect(readFileSync(join(large.worktree.path, "a.txt"), "utf8")).toBe("edit\n");
  expect(large.record).toMatchObject({ reason: expect.stringContaining(large.worktree.path) });
  const many = await childRuns(root, "mkdir gen && for i in $(seq 1 40); do echo $i > gen/$i.txt; done", {}, { keptChangesMax: max });
  expect(many.kept).toBe("");
  expect(many.diagnostics).toMatch(/The largest: gen\/ \(\d+ KiB in \d+ files\)/);
  // Staged by the child's own git and marked skip-worktree, then deleted: git keeps the index's entry, with no file on disk to measure.
  const hidden = await childRuns(root, "head -c 3145728 /dev/zero > big.bin && git add big.bin && git update-index --skip-worktree big.bin && rm big.bin", {}, { keptChangesMax: max });
  expect(hidden.kept).toBe("");
  expect(hidden.diagnostics).toContain("The largest: big.bin (3.0 MiB)");
  const within = await childRuns(root, "echo edit > a.txt && head -c 4096 /dev/zero > data/base.bin && echo new > n.txt", {}, { keptChangesMax: max });
  expect(within.stats).toEqual({ files: 3, insertions: 2, deletions: 1 });
  expect(within.warnings).toEqual([]);
  expect(existsSync(within.worktree.path)).toBe(false);
  // The three left over the cap go at a session start once their process has ended (this one's, here: their owner files name one that has).
  const ended = spawnSync("true").pid;
  for (const child of [large, many, hidden]) {
    const owner = ownerFile(worktreesDir(home, root), child.runId);
    writeFileSync(owner, JSON.stringify({ ...JSON.parse(readFileSync(owner, "utf8")), pid: ended }));
  }
  expect((await cleanupIsolation(home, root)).removedWorktrees.sort()).toEqual([large.runId, many.runId, hidden.runId].sort());
  expect(worktreeCount(root)).toBe(1);
});

/** An index file (version 2) holding `entries` as a child's script can write it, with paths git's own commands refuse to stage. */
function craftedIndex(entries: { path: string; id: string; mode: number }[]): Buffer {
  const records = entries.map(({ path, id, mode }) => {
    const fixed = Buffer.alloc(62);
    fixed.writeUInt32BE(mode, 24);
    Buffer.from(id, "hex").copy(fixed, 40);
    fixed.writeUInt16BE(Buffer.byteLength(path), 60);
    const record = Buffer.concat([fixed, Buffer.from(path)]);
    return Buffer.concat([record, Buffer.alloc(8 - (record.length % 8))]);
  });
  const header = Buffer.alloc(12);
  header.write("DIRC");
  header.writeUInt32BE(2, 4);
  header.writeUInt32BE(entries.length, 8);
  const body = Buffer.concat([header, ...records]);
  return Buffer.concat([body, createHash("sha1").update(body).digest()]);
}

test("a child whose hand-written index holds a hook inside .git and a file through .. has neither kept: a file out of its worktree is never read", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  const store = openRunStore({ home, cwd: root, sessionId: "s", registry: new RunRegistry() });
  const run = store.create({ kind: "agent", task: { description: "crafts" }, background: false });
  const pending = startIsolation(await openRepository(root), run.runId, home);
  const worktree = await isolationWorktree(pending);
  const git = (args: string[], input = "") => execFileSync("git", [`--git-dir=${worktree.gitDir}`, `--work-tree=${worktree.path}`, ...args], { encoding: "utf8", input }).trim();
  const placeholder = git(["hash-object", "-w", "--stdin"], "placeholder\n");
  writeFileSync(join(worktree.gitDir, "index"), craftedIndex([
    { path: "../outside.txt", id: placeholder, mode: 0o100644 },
    { path: ".git/hooks/post-checkout", id: placeholder, mode: 0o100755 },
    { path: "a.txt", id: git(["rev-parse", "HEAD:a.txt"]), mode: 0o100644 },
  ]));
  // A file of the user's beside the worktree, and a .git folder in place of the worktree's .git file.
  writeFileSync(join(dirname(worktree.path), "outside.txt"), "a secret of the user's\n");
  execFileSync("bash", ["-c", "rm .git && mkdir -p .git/hooks && echo hook > .git/hooks/post-checkout && echo n > n.txt"], { cwd: worktree.path, stdio: NO_STDIN });
  await finishIsolation(pending, runFiles(store.scope, run.runId), home, run);
  expect(gitIn(root, "ls-tree", "-r", "--name-only", `refs/pi-flow/${run.runId}`)).toBe("a.txt\nn.txt");
});

test("kept changes holding a hook inside .git and a file through .. (made elsewhere: a cassette, an older pi-flow) are a conflict at apply naming them, nothing written", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  const store = openRunStore({ home, cwd: root, sessionId: "s", registry: new RunRegistry() });
  const runId = (await childRuns(root, "echo n > n.txt")).runId;
  const hook = gitIn(root, "hash-object", "-w", "--stdin"); // empty input: an empty blob
  const index = join(mkdtempSync(join(tmpdir(), "pi-flow-index-")), "index");
  writeFileSync(index, craftedIndex([
    { path: "../evil", id: hook, mode: 0o100644 },
    { path: ".git/hooks/post-checkout", id: hook, mode: 0o100755 },
    { path: "a.txt", id: gitIn(root, "rev-parse", "HEAD:a.txt"), mode: 0o100644 },
    { path: "n.txt", id: gitIn(root, "rev-parse", `refs/pi-flow/${runId}:n.txt`), mode: 0o100644 },
  ]));
  const tree = execFileSync("git", ["write-tree"], { cwd: root, env: { ...process.env, GIT_INDEX_FILE: index }, encoding: "utf8" }).trim();
  gitIn(root, "update-ref", `refs/pi-flow/${runId}`, gitIn(root, "commit-tree", tree, "-p", `refs/pi-flow/${runId}^`, "-m", "kept"));
  void store;
  expect(await applyChanges(await openRepository(root), runId)).toEqual({ status: "conflict", files: ["../evil", ".git/hooks/post-checkout"], reason: "paths inside a .git folder or through .. (put in the child's index by hand), which git never checks out and an apply never writes" });
  expect(existsSync(join(root, "../evil"))).toBe(false);
  expect(existsSync(join(root, ".git/hooks/post-checkout"))).toBe(false);
  expect(existsSync(join(root, "n.txt"))).toBe(false);
});

test("FIFOs and sockets the child left (a .gitignore or .gitattributes git would wait on forever, one in place of a tracked file) are not kept, and the rest is", async () => {
  const root = makeRepo({ "a.txt": "a\n", "b.txt": "b\n" });
  const child = await childRuns(root, 'mkfifo .gitignore && mkdir sub && mkfifo sub/.gitattributes && rm b.txt && mkfifo b.txt && python3 -c "import socket; socket.socket(socket.AF_UNIX).bind(\'sub/dev.sock\')" && echo edit >> a.txt');
  expect(child.stats).toEqual({ files: 2, insertions: 1, deletions: 1 });
  expect(gitIn(root, "diff", "--name-status", `refs/pi-flow/${child.runId}^`, `refs/pi-flow/${child.runId}`)).toBe("M\ta.txt\nD\tb.txt");
  expect(child.diagnostics).toContain("FIFOs or sockets the child left in its worktree are not kept (git keeps neither; one in place of a tracked file is kept as that file deleted): .gitignore, b.txt, sub/.gitattributes, sub/dev.sock");
  // Where no find is installed (a minimal container), they are found all the same.
  const gitOnly = realpathSync(mkdtempSync(join(tmpdir(), "pi-flow-path-")));
  symlinkSync(execFileSync("bash", ["-c", "command -v git"], { encoding: "utf8", stdio: NO_STDIN }).trim(), join(gitOnly, "git"));
  const path = process.env.PATH;
  process.env.PATH = gitOnly;
  try {
    const without = await childRuns(root, "mkfifo .gitignore && echo edit >> a.txt", { PATH: path ?? "" });
    expect(without.stats).toEqual({ files: 1, insertions: 1, deletions: 0 });
    expect(without.diagnostics).toContain("are not kept (git keeps neither; one in place of a tracked file is kept as that file deleted): .gitignore.");
  } finally {
    process.env.PATH = path;
  }
});

test("a file in a folder git takes for a git folder (.GIT, .git., git~1) is not kept, and the rest is: git refuses to add it, which lost every change", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  const child = await childRuns(root, "mkdir -p x/.GIT y/git~1 && echo hook > x/.GIT/config && echo n > y/git~1/n && echo edit >> a.txt");
  expect(child.stats).toEqual({ files: 1, insertions: 1, deletions: 0 });
  expect(child.diagnostics).toContain("files in folders git takes for a git folder (.git in any case, .git. or git~1) are not kept: git never adds them. At x/.GIT/config, y/git~1/n");
});

test("a child that points the shared config's core.worktree at the folder around the user's checkout (their home): its changes are kept, the repository is refused naming the setting, and an apply writes into the checkout, never there", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  const around = dirname(root);
  // git config in a worktree writes the config every worktree shares: the user's checkout now has $S for its work tree.
  const child = await childRuns(root, 'git config core.worktree "$S" && echo "ssh-ed25519 AAAA child" > authorized_keys', { S: around });
  expect(child.stats).toMatchObject({ files: 1 });
  await expect(openRepository(root)).rejects.toMatchObject({ code: "configuration_invalid", message: expect.stringContaining(`its config sets core.worktree to ${JSON.stringify(around)}`) });
  // Set while an apply already runs: each git of it still works in the checkout.
  expect(await applyChanges({ root, commonDir: join(root, ".git"), prefix: "" }, child.runId)).toMatchObject({ status: "applied", files: ["authorized_keys"] });
  expect(existsSync(join(around, "authorized_keys"))).toBe(false);
  expect(readFileSync(join(root, "authorized_keys"), "utf8")).toBe("ssh-ed25519 AAAA child\n");
});

test("a child that sets the shared config's core.bare: the repository is refused naming the setting and how to undo it, not called a bare repository", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  await childRuns(root, "git config core.bare true");
  await expect(openRepository(root)).rejects.toMatchObject({ code: "configuration_invalid", message: expect.stringContaining("its config sets core.bare to true (a worktree child's bash can set it in the config every worktree shares). If you did not set it, remove it (git config --unset core.bare)") });
});
