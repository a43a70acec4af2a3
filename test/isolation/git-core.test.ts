import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, realpathSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { applyChanges } from "../../src/isolation/apply.ts";
import { changesRef, patchText, readChanges } from "../../src/isolation/changes.ts";
import { openRepository } from "../../src/isolation/repository.ts";
import { workingTreeId } from "../../src/isolation/snapshot.ts";
import { createIsolation, settleIsolation } from "../../src/isolation/worktree.ts";
import { gitIn, makeRepo, worktreeCount, writeIn } from "../support/git-repo.ts";

const home = realpathSync(mkdtempSync(join(tmpdir(), "pi-flow-home-")));
const BINARY = Buffer.from([0, 1, 2, 255, 254, 0, 10, 13, 0]);
let next = 0;
const runId = () => `r-test${String(next++).padStart(4, "0")}`;

describe("worktree isolation on a real git repository", () => {
  it("starts from the tree the user sees, in the same subdirectory, without touching their index, HEAD or stash", async () => {
    const root = makeRepo({ "src/a.txt": "committed\n", ".gitignore": "secret.env\n" });
    writeIn(root, { "src/a.txt": "edited, not committed\n", "notes with space é.md": "untracked\n", "secret.env": "ignored\n" });
    gitIn(root, "add", "src/a.txt");
    writeIn(root, { "src/a.txt": "edited again, unstaged\n" });
    const before = { status: gitIn(root, "status", "--porcelain=v1"), head: gitIn(root, "rev-parse", "HEAD"), refs: gitIn(root, "for-each-ref") };

    const isolation = await createIsolation(await openRepository(join(root, "src")), runId(), home);
    expect(isolation.cwd).toBe(join(isolation.path, "src"));
    expect(isolation.path.startsWith(home)).toBe(true);
    expect(readFileSync(join(isolation.cwd, "a.txt"), "utf8")).toBe("edited again, unstaged\n");
    expect(readFileSync(join(isolation.path, "notes with space é.md"), "utf8")).toBe("untracked\n");
    expect(existsSync(join(isolation.path, "secret.env"))).toBe(false);
    expect(await settleIsolation(isolation, home)).toBeNull();
    expect(existsSync(isolation.path)).toBe(false);
    expect({ status: gitIn(root, "status", "--porcelain=v1"), head: gitIn(root, "rev-parse", "HEAD"), refs: gitIn(root, "for-each-ref") }).toEqual(before);
    expect(worktreeCount(root)).toBe(1);
  });

  it("keeps a child's changes exactly (binary, deleted, renamed, odd names) and applies them 3-way over the user's edits", async () => {
    const root = makeRepo({ "old name.txt": "rename me\n".repeat(20), "gone.txt": "delete me\n", "shared.txt": "one\ntwo\nthree\nfour\nfive\n" });
    const id = runId();
    const isolation = await createIsolation(await openRepository(root), id, home);
    writeIn(isolation.path, { "bin/ü data.bin": BINARY, "shared.txt": "one\ntwo\nthree\nfour\nFIVE\n" });
    rmSync(join(isolation.path, "gone.txt"));
    renameSync(join(isolation.path, "old name.txt"), join(isolation.path, "new name.txt"));
    const stats = await settleIsolation(isolation, home);
    expect(stats).toEqual({ files: 5, insertions: 21, deletions: 22 });
    expect(gitIn(root, "cat-file", "-p", `${changesRef(id)}:bin/ü data.bin`)).toBeDefined();
    expect(execFileSync("git", ["cat-file", "blob", `${changesRef(id)}:bin/ü data.bin`], { cwd: root }).equals(BINARY)).toBe(true);
    const kept = await readChanges(root, id);
    expect(await patchText(root, kept!.base, kept!.commit)).toContain("rename from old name.txt");

    // The user edits the same file elsewhere meanwhile, and has an untracked file: both survive.
    writeIn(root, { "shared.txt": "ONE\ntwo\nthree\nfour\nfive\n", "mine.txt": "untracked\n" });
    const applied = await applyChanges(await openRepository(root), id);
    expect(applied).toEqual({ status: "applied", files: ["bin/ü data.bin", "gone.txt", "new name.txt", "old name.txt", "shared.txt"] });
    expect(readFileSync(join(root, "new name.txt"), "utf8")).toBe("rename me\n".repeat(20)); // the rename landed: new name, old one gone
    expect(existsSync(join(root, "old name.txt"))).toBe(false);
    expect(readFileSync(join(root, "shared.txt"), "utf8")).toBe("ONE\ntwo\nthree\nfour\nFIVE\n");
    expect(readFileSync(join(root, "bin/ü data.bin")).equals(BINARY)).toBe(true);
    expect(existsSync(join(root, "gone.txt"))).toBe(false);
    expect(readFileSync(join(root, "mine.txt"), "utf8")).toBe("untracked\n");
    expect(gitIn(root, "diff", "--cached", "--name-only")).toBe(""); // nothing staged
  });

  it("reports a conflict naming the file and changes nothing", async () => {
    const root = makeRepo({ "f.txt": "a\n" });
    const id = runId();
    const isolation = await createIsolation(await openRepository(root), id, home);
    writeIn(isolation.path, { "f.txt": "child\n", "other.txt": "new\n" });
    await settleIsolation(isolation, home);
    writeIn(root, { "f.txt": "user\n" });
    expect(await applyChanges(await openRepository(root), id)).toEqual({ status: "conflict", files: ["f.txt"] });
    expect(readFileSync(join(root, "f.txt"), "utf8")).toBe("user\n");
    expect(existsSync(join(root, "other.txt"))).toBe(false);
  });

  it("sixteen isolations made at once all succeed, and git's worktree list is back to one entry", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const repo = await openRepository(root);
    const isolations = await Promise.all(Array.from({ length: 16 }, () => createIsolation(repo, runId(), home)));
    expect(new Set(isolations.map((i) => i.path)).size).toBe(16);
    expect(worktreeCount(root)).toBe(17);
    await Promise.all(isolations.map((isolation) => settleIsolation(isolation, home)));
    expect(worktreeCount(root)).toBe(1);
  });

  it("works on a detached HEAD and on a repository with no commit yet", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    gitIn(root, "checkout", "-q", "--detach");
    const isolation = await createIsolation(await openRepository(root), runId(), home);
    expect(readFileSync(join(isolation.path, "a.txt"), "utf8")).toBe("a\n");
    await settleIsolation(isolation, home);
    expect(gitIn(root, "status", "--porcelain=v1", "-b").split("\n")[0]).toContain("HEAD (no branch)");

    const empty = realpathSync(mkdtempSync(join(tmpdir(), "pi-flow-git-")));
    gitIn(empty, "init", "-q");
    writeFileSync(join(empty, "x.txt"), "x\n");
    const fresh = await createIsolation(await openRepository(empty), runId(), home);
    expect(readFileSync(join(fresh.path, "x.txt"), "utf8")).toBe("x\n");
    await settleIsolation(fresh, home);
  });

  it("outside a repository and in a bare one, says why as configuration_invalid", async () => {
    const plain = mkdtempSync(join(tmpdir(), "pi-flow-plain-"));
    await expect(openRepository(plain)).rejects.toThrow(expect.objectContaining({ code: "configuration_invalid", message: expect.stringContaining("not inside a git repository") }));
    const bare = join(plain, "bare.git");
    mkdirSync(bare);
    gitIn(bare, "init", "-q", "--bare");
    await expect(openRepository(bare)).rejects.toThrow(expect.objectContaining({ code: "configuration_invalid", message: expect.stringContaining("bare repository") }));
  });

  it("in a repository git cannot read, says why as configuration_invalid", async () => {
    const damaged = makeRepo({ "a.txt": "a\n" });
    writeFileSync(join(damaged, ".git", "HEAD"), "not a ref\n");
    const dotGit = JSON.stringify(join(damaged, ".git"));
    await expect(openRepository(join(damaged))).rejects.toThrow(
      expect.objectContaining({ code: "configuration_invalid", message: expect.stringContaining(`git cannot read the repository at ${dotGit}: it is not a valid git directory`) }),
    );
    const future = makeRepo({ "a.txt": "a\n" });
    gitIn(future, "config", "core.repositoryformatversion", "99");
    await expect(openRepository(future)).rejects.toThrow(expect.objectContaining({ code: "configuration_invalid", message: expect.stringContaining("git cannot read this repository (fatal: Expected git repo version <= 1, found 99)") }));
  });

  it("sees a user's edit of the same size made in the second git last wrote their index, though the tree is read a second later", async () => {
    // Git compares whole seconds: such an edit is found only because the index is no newer than it.
    const second = () => Math.floor(Date.now() / 1000);
    const inSecond = (path: string) => Math.floor(statSync(path).mtimeMs / 1000);
    let root = "";
    let at = 0;
    do {
      at = second();
      root = makeRepo({ "shared.txt": "one\ntwo\n" });
      writeIn(root, { "shared.txt": "ONE\ntwo\n" });
    } while (inSecond(join(root, ".git", "index")) !== at || inSecond(join(root, "shared.txt")) !== at);
    while (second() === at) await new Promise((resolve) => setTimeout(resolve, 10)); // the tree is read in the next second, as on a busy machine
    const tree = await workingTreeId(await openRepository(root));
    expect(gitIn(root, "cat-file", "blob", `${tree}:shared.txt`)).toBe("ONE\ntwo");
  });

  it("leaves a flow home inside the working tree out of the base", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const inner = join(root, "dot-pi", "flow");
    writeIn(root, { "dot-pi/flow/projects/p/sessions/s/runs/r/record.json": "{}\n", "dot-pi/settings.json": "{}\n" });
    const isolation = await createIsolation(await openRepository(root), runId(), inner);
    expect(isolation.path.startsWith(inner)).toBe(true);
    expect(gitIn(root, "ls-tree", "-r", "--name-only", isolation.base)).toBe("a.txt\ndot-pi/settings.json");
    expect(await settleIsolation(isolation, inner)).toBeNull();
  });

  it("runs no program a child planted: a rewritten .git, a nested repository and an attribute all name one, and nothing runs", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const isolation = await createIsolation(await openRepository(root), runId(), home);
    const proof = join(home, `planted-${isolation.runId}`);
    const command = `touch ${proof}; false`;
    const hostile = (dir: string) => ({
      [`${dir}/HEAD`]: "ref: refs/heads/main\n",
      [`${dir}/objects/info/keep`]: "",
      [`${dir}/refs/heads/keep`]: "",
      [`${dir}/hooks/post-index-change`]: `#!/bin/sh\n${command}\n`,
      [`${dir}/config`]: `[core]\n\trepositoryformatversion = 0\n\tfsmonitor = "${command}"\n\thooksPath = hooks\n[filter "x"]\n\tclean = "${command}"\n`,
    });
    // The child makes a repository inside its tree with a commit and that config, points its
    // worktree's .git at a git folder of its own, and asks for the filter that config defines.
    const nested = join(isolation.path, "nested");
    mkdirSync(nested);
    gitIn(nested, "init", "-q", "-b", "main");
    writeIn(nested, { "n.txt": "n\n" });
    gitIn(nested, "add", "-A");
    gitIn(nested, "commit", "-q", "-m", "nested");
    writeIn(nested, { ".git/config": hostile(".git")[".git/config"]!, ".git/hooks/post-index-change": hostile(".git")[".git/hooks/post-index-change"]! });
    writeIn(isolation.path, { ...hostile("evil"), ".gitattributes": "*.txt filter=x\n", "b.txt": "b\n" });
    writeFileSync(join(isolation.path, ".git"), "gitdir: evil\n");
    const stats = await settleIsolation(isolation, home);
    expect(existsSync(proof)).toBe(false);
    // Its changes are still kept, from the worktree git made, .git file aside.
    expect(stats?.files).toBeGreaterThan(0);
    expect(gitIn(root, "show", `${changesRef(isolation.runId)}:b.txt`)).toBe("b");
    expect(gitIn(root, "ls-tree", "--name-only", changesRef(isolation.runId))).not.toContain(".git\n");
  });

  it("applies a change that turns a folder into a link without deleting anything through the link", async () => {
    const root = makeRepo({ "dir/x": "the project's file\n", "dir/sub/y": "another\n" });
    const outside = realpathSync(mkdtempSync(join(tmpdir(), "pi-flow-outside-")));
    writeIn(outside, { x: "not the project's\n", "sub/y": "not the project's either\n" });
    const isolation = await createIsolation(await openRepository(root), runId(), home);
    rmSync(join(isolation.path, "dir"), { recursive: true });
    symlinkSync(outside, join(isolation.path, "dir"));
    await settleIsolation(isolation, home);
    const applied = await applyChanges(await openRepository(root), isolation.runId);
    expect(applied).toEqual({ status: "applied", files: ["dir", "dir/sub/y", "dir/x"] });
    expect(readlinkSync(join(root, "dir"))).toBe(outside);
    expect(readFileSync(join(outside, "x"), "utf8")).toBe("not the project's\n");
    expect(readFileSync(join(outside, "sub", "y"), "utf8")).toBe("not the project's either\n");
  });
});

describe("an apply that deletes a folder's files", () => {
  it("leaves no empty folder where the child removed one, and keeps a folder that still holds the user's files", async () => {
    const root = makeRepo({ "old/deep/x.txt": "x\n", "old/y.txt": "y\n", "kept/z.txt": "z\n", "a.txt": "a\n" });
    const isolation = await createIsolation(await openRepository(root), runId(), home);
    rmSync(join(isolation.path, "old"), { recursive: true });
    rmSync(join(isolation.path, "kept/z.txt"));
    await settleIsolation(isolation, home);
    writeIn(root, { "kept/mine.txt": "the user's, untracked\n" });
    const applied = await applyChanges(await openRepository(root), isolation.runId);
    expect(applied).toEqual({ status: "applied", files: ["kept/z.txt", "old/deep/x.txt", "old/y.txt"] });
    expect(existsSync(join(root, "old"))).toBe(false);
    expect(readFileSync(join(root, "kept/mine.txt"), "utf8")).toBe("the user's, untracked\n");
    expect(gitIn(root, "status", "--porcelain")).toBe("D kept/z.txt\n D old/deep/x.txt\n D old/y.txt\n?? kept/mine.txt"); // trimmed: the first line lost its space
  });
});
