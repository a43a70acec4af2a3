// Every worktree shares the repository's config and .git/info/attributes: a worktree child's bash
// can define filter and merge drivers there (any program) and name them for every file. pi-flow's
// own git (keeping the child's changes, making a sibling's worktree, an apply) runs none of them,
// while the user's own drivers (their global config's) still run. Real git, real programs.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, test } from "vitest";
import { applyChanges } from "../../src/isolation/apply.ts";
import { runGit } from "../../src/isolation/git.ts";
import { openRepository } from "../../src/isolation/repository.ts";
import { createIsolation, settleIsolation } from "../../src/isolation/worktree.ts";
import { gitIn, makeRepo, writeIn, NO_STDIN } from "../support/git-repo.ts";

const home = realpathSync(mkdtempSync(join(tmpdir(), "pi-flow-home-")));
let marks: string;
let globalBefore: string | undefined;
beforeEach(() => {
  marks = realpathSync(mkdtempSync(join(tmpdir(), "pi-flow-marks-")));
  globalBefore = process.env.GIT_CONFIG_GLOBAL;
  process.env.GIT_CONFIG_GLOBAL = join(marks, "user-gitconfig"); // the user's own config: nothing, unless a test says
  writeFileSync(process.env.GIT_CONFIG_GLOBAL, "");
});
afterEach(() => {
  if (globalBefore === undefined) delete process.env.GIT_CONFIG_GLOBAL;
  else process.env.GIT_CONFIG_GLOBAL = globalBefore;
  rmSync(marks, { recursive: true, force: true });
});

/** A program that leaves a mark named `name` when run, then passes its input through. */
const marking = (name: string): string => `sh -c 'touch ${marks}/${name}; cat'`;
const marksLeft = (): string[] => readdirSync(marks).filter((name) => name !== "user-gitconfig");

test("drivers a worktree child defines in the shared config and names in .git/info/attributes run neither when its changes are kept, nor when a sibling's worktree is made, nor at apply", async () => {
  const root = makeRepo({ "a.txt": "one\ntwo\nthree\n", "b.txt": "b\n" });
  const repo = await openRepository(root);
  const child = await createIsolation(repo, "r-progs0001", home);
  // The child's bash: git config writes the config every worktree shares.
  const drivers: [string, string][] = [
    ["filter.evil.clean", marking("clean")],
    ["filter.evil.smudge", marking("smudge")],
    ["filter.evil.required", "true"],
    ["filter.pipe.process", `touch ${marks}/process`],
    ["merge.evil.driver", `touch ${marks}/merge; exit 1`],
  ];
  for (const [key, value] of drivers) execFileSync("git", ["config", key, value], { cwd: child.path });
  writeIn(join(root, ".git"), { "info/attributes": "*.txt filter=evil merge=evil\n*.bin filter=pipe\n" });
  writeIn(child.path, { "a.txt": "one\ntwo\nthree, the child's\n", "c.bin": "child bytes\n" });
  expect(await settleIsolation(child, home)).toMatchObject({ files: 2 });
  // A sibling made now, from the user's tree with an edit of theirs in the same file.
  writeIn(root, { "a.txt": "one, the user's\ntwo\nthree\n" });
  const sibling = await createIsolation(repo, "r-progs0002", home);
  expect(readFileSync(join(sibling.path, "a.txt"), "utf8")).toBe("one, the user's\ntwo\nthree\n");
  await settleIsolation(sibling, home);
  const applied = await applyChanges(await openRepository(root), child.runId);
  expect(applied).toMatchObject({ status: "applied" });
  // git's own text merge, in place of the child's driver: both edits.
  expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("one, the user's\ntwo\nthree, the child's\n");
  expect(readFileSync(join(root, "c.bin"), "utf8")).toBe("child bytes\n");
  expect(marksLeft()).toEqual([]);
});

test("the user's own filter (their global config) still runs, and a redefinition of it in the repository's config does not", async () => {
  execFileSync("git", ["config", "--file", process.env.GIT_CONFIG_GLOBAL!, "filter.mark.smudge", marking("users-smudge")]);
  const root = makeRepo({ ".gitattributes": "*.txt filter=mark\n", "a.txt": "a\n" });
  gitIn(root, "config", "filter.mark.smudge", marking("repository-smudge"));
  const isolation = await createIsolation(await openRepository(root), "r-progs0003", home);
  expect(readFileSync(join(isolation.path, "a.txt"), "utf8")).toBe("a\n");
  expect(marksLeft()).toEqual(["users-smudge"]);
  await settleIsolation(isolation, home);
  expect(existsSync(join(marks, "repository-smudge"))).toBe(false);
});

test("a child that points the shared config's core.attributesFile at its own attributes does not pick the files the user's own filter runs on; the user's own attributes file still counts", async () => {
  execFileSync("git", ["config", "--file", process.env.GIT_CONFIG_GLOBAL!, "filter.mark.clean", marking("users-clean")]);
  const root = makeRepo({ "a.txt": "a\n" });
  const child = await createIsolation(await openRepository(root), "r-progs0005", home);
  writeFileSync(join(marks, "childs-attributes"), "* filter=mark\n");
  execFileSync("git", ["config", "core.attributesFile", join(marks, "childs-attributes")], { cwd: child.path });
  writeIn(child.path, { "a.txt": "the child's\n" });
  expect(await settleIsolation(child, home)).toMatchObject({ files: 1 });
  expect(marksLeft()).toEqual(["childs-attributes"]);
  // The user's own core.attributesFile (their global config) is still read.
  writeFileSync(join(marks, "users-attributes"), "*.txt filter=mark\n");
  execFileSync("git", ["config", "--file", process.env.GIT_CONFIG_GLOBAL!, "core.attributesFile", join(marks, "users-attributes")]);
  const second = await createIsolation(await openRepository(root), "r-progs0006", home);
  writeIn(second.path, { "a.txt": "the child's\n" });
  await settleIsolation(second, home);
  expect(marksLeft()).toContain("users-clean");
});

test("pi-flow's git ls-files runs no driver the repository defines, also where git hashes a racily clean file to tell it modified", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  gitIn(root, "config", "filter.evil.clean", marking("clean"));
  writeIn(join(root, ".git"), { "info/attributes": "* filter=evil\n" });
  // The index no newer than the file: git cannot trust its stat data, and reads (cleans) the file.
  const { mtime } = statSync(join(root, "a.txt"));
  utimesSync(join(root, ".git", "index"), mtime, mtime);
  for (const args of [["ls-files", "-z", "-m"], ["ls-files", "-z", "-c", "-o"], ["ls-files", "-zmd"]]) await runGit(args, { cwd: root });
  expect(marksLeft()).toEqual([]);
  execFileSync("git", ["ls-files", "-m"], { cwd: root }); // git itself, unguarded, does run it here
  expect(marksLeft()).toEqual(["clean"]);
});

test("a child that sets log.showSignature and gpg.program in the shared config, with a signed-looking commit on the stash, runs no program when pi-flow reads the stash list", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  const child = await createIsolation(await openRepository(root), "r-progs0004", home);
  const gpg = join(marks, "gpg.sh");
  writeFileSync(gpg, `#!/bin/sh\ntouch ${marks}/gpg\nexit 1\n`, { mode: 0o755 });
  // The child's bash: git log verifies a commit's gpgsig header with gpg.program, and pi-flow reads the stash with git log -g.
  const bash = (command: string): string => execFileSync("bash", ["-c", command], { cwd: child.path, encoding: "utf8", stdio: NO_STDIN }).trim();
  bash(`git config log.showSignature true && git config gpg.program ${gpg}`);
  const signed = bash(
    `printf 'tree %s\\nparent %s\\nauthor c <c@c> 0 +0000\\ncommitter c <c@c> 0 +0000\\ngpgsig -----BEGIN PGP SIGNATURE-----\\n \\n -----END PGP SIGNATURE-----\\n\\nsigned\\n' "$(git rev-parse HEAD^{tree})" "$(git rev-parse HEAD)" | git hash-object -t commit -w --stdin`,
  );
  bash(`git update-ref --create-reflog refs/stash ${signed}`);
  await settleIsolation(child, home);
  expect(marksLeft()).toEqual(["gpg.sh"]); // the program, never run
});

test("a child that grows the shared config past what pi-flow reads of its drivers has none of them run: its changes are not kept, and the error says why", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  const child = await createIsolation(await openRepository(root), "r-progs0005", home);
  const config = join(root, ".git/config");
  // 17 MiB of drivers listed before the one that leaves a mark.
  const long = `[filter "f"]\n\tclean = cat ${"x".repeat(1024 * 1024)}\n`;
  writeFileSync(config, `${readFileSync(config, "utf8")}${long.repeat(17)}[filter "evil"]\n\tclean = ${marking("clean")}\n`);
  writeIn(join(root, ".git"), { "info/attributes": "* filter=evil\n" });
  writeIn(child.path, { "a.txt": "child a\n" });
  await expect(settleIsolation(child, home)).rejects.toThrow("the repository's config sets over 16777216 bytes of filter and merge drivers");
  expect(marksLeft()).toEqual([]);
});
