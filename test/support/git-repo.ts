// Real git repositories for tests: made in a temporary directory, with a fixed identity.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

const ENV = { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t" };

/**
 * stdio for a test's `bash -c`: no stdin. Given Node's default pipe (a socket pair) for stdin, and
 * no SHLVL in the environment (as under some CI runners), bash takes itself for a remote shell and
 * runs ~/.bashrc, whose output lands in what the test reads and whose run time is anyone's.
 */
export const NO_STDIN: ["ignore", "pipe", "pipe"] = ["ignore", "pipe", "pipe"];

export function gitIn(cwd: string, ...args: string[]): string {
  return execFileSync("git", ["-c", "core.quotePath=false", ...args], { cwd, env: ENV, encoding: "utf8" }).trim();
}

export function writeIn(root: string, files: Record<string, string | Buffer>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
}

/** A repository with one commit holding `files`. */
export function makeRepo(files: Record<string, string | Buffer> = { "README.md": "hello\n" }): string {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "pi-flow-git-")));
  gitIn(root, "init", "-q", "-b", "main");
  writeIn(root, files);
  gitIn(root, "add", "-A");
  gitIn(root, "commit", "-q", "-m", "initial");
  return root;
}

/** `git worktree list` entries of the repository. */
export function worktreeCount(root: string): number {
  return gitIn(root, "worktree", "list", "--porcelain").split("\n").filter((line) => line.startsWith("worktree ")).length;
}
