// The one way pi-flow runs git: a real `git` process, arguments never through a shell, output as
// bytes (paths and file contents may be any bytes), and the environment pi-flow needs to write
// objects without the user's identity or hooks.
import { spawn } from "node:child_process";
import { FlowError } from "../contract/errors.ts";
import { mayRunDriver, PROGRAM_KEYS, programOverrides, withConfigEntries } from "./config-programs.ts";
import { assertGitFilesReadable } from "./git-files.ts";
import { killTree } from "./process-tree.ts";

export interface GitResult {
  code: number;
  stdout: Buffer;
  stderr: string;
  /** Its output went over `maxStdoutBytes`: git was stopped, and `stdout` holds what came before. */
  overflowed?: boolean;
}

export interface GitOptions {
  cwd: string;
  /** A child's worktree, pinned (see PinnedWorktree): git is given its folders and never reads its `.git`. */
  worktree?: PinnedWorktree;
  /** Extra environment, e.g. GIT_INDEX_FILE for a private index. */
  env?: Record<string, string>;
  input?: Buffer | string;
  /** At most this much output is kept: past it git is stopped (see GitResult.overflowed), and memory stays bounded. */
  maxStdoutBytes?: number;
  /**
   * `cwd` is any folder, and git finds the repository and its top itself (openRepository). Otherwise
   * `cwd` is the top of the working tree, and git is told so (`--work-tree`): a `core.worktree` or
   * `core.bare` a child's bash sets in the config every worktree shares never moves it elsewhere.
   */
  findsTop?: boolean;
}

/** Commits pi-flow writes (snapshots and changes) carry this identity, so git needs no user config. */
const IDENTITY = {
  GIT_AUTHOR_NAME: "pi-flow",
  GIT_AUTHOR_EMAIL: "pi-flow@localhost",
  GIT_COMMITTER_NAME: "pi-flow",
  GIT_COMMITTER_EMAIL: "pi-flow@localhost",
  // Fixed dates: the same tree and parent give the same commit, whoever captures it.
  GIT_AUTHOR_DATE: "1970-01-01T00:00:00Z",
  GIT_COMMITTER_DATE: "1970-01-01T00:00:00Z",
};

/**
 * Settings every git pi-flow runs gets: paths as bytes, and no program run because a config says
 * so (an fsmonitor, a hook, gpg.program verifying a signed commit `git log` shows, as it reads the
 * stash list). pi-flow needs none, and a child's bash can set them in the config every worktree shares.
 */
const HARDENED = ["-c", "core.quotePath=false", "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c", "log.showSignature=false"];

/**
 * No transport at all: pi-flow never fetches, but git does by itself in a partial clone, for an
 * object it needs and lacks, from the promisor remote the config names. A child's bash can make the
 * shared config one (`extensions.partialClone`, a remote whose URL is `ext::<any command>`,
 * `protocol.ext.allow`, `core.sshCommand`) and write a ref naming a missing object: the next
 * `for-each-ref` pi-flow runs would run that command, with pi-flow's environment. An empty
 * GIT_ALLOW_PROTOCOL allows no protocol, whatever the config says; GIT_NO_LAZY_FETCH (git 2.45)
 * says the same to a newer git.
 */
const NO_TRANSPORT = { GIT_ALLOW_PROTOCOL: "", GIT_NO_LAZY_FETCH: "1" };

/**
 * A child's worktree as git must see it: by the administrative folder `git worktree add` made
 * (`--git-dir`, `--work-tree`), never by the worktree's `.git` file, which the child can rewrite to
 * point git at a repository (and a config) of its own.
 */
export interface PinnedWorktree {
  path: string;
  gitDir: string;
}

/** Where a git command runs: a repository's folder, or a child's worktree, pinned. */
export function gitPlace(place: string | PinnedWorktree): GitOptions {
  return typeof place === "string" ? { cwd: place } : { cwd: place.path, worktree: place };
}

/**
 * What `git diff` needs to write a patch `git apply` reads back, whatever the user's config says:
 * no external diff or textconv program (diff.external set to difftastic, say, runs instead and
 * writes no patch), and the a/ b/ prefixes (diff.noprefix would make apply drop a path's first folder).
 */
export const PATCH_OPTIONS = ["--no-ext-diff", "--no-textconv", "--src-prefix=a/", "--dst-prefix=b/", "--no-color"];

/** The most of the repository's driver settings read (a child's bash can grow the config without bound). */
const PROGRAM_LISTING_MAX_BYTES = 16 * 1024 * 1024;

/** How long one git may run (10 minutes; `PI_FLOW_GIT_TIMEOUT_MS` sets it): past it, it is waiting on something that never comes. */
export const GIT_TIMEOUT_MS = 10 * 60 * 1000;
export const GIT_TIMEOUT_VARIABLE = "PI_FLOW_GIT_TIMEOUT_MS";

export function gitTimeoutMs(): number {
  const value = Number(process.env[GIT_TIMEOUT_VARIABLE] ?? Number.NaN);
  return Number.isInteger(value) && value > 0 ? value : GIT_TIMEOUT_MS;
}

/** A git pi-flow ran did not finish within the time limit, and was stopped with the processes it started. */
export class GitTimedOut extends FlowError {
  constructor(command: string, limitMs: number) {
    super(
      "run_unavailable",
      `git ${command} did not finish in ${limitMs / 1000} s and was stopped. git waits forever on a FIFO, socket or device in place of a file of the repository's git folder (a ref, an object) or of the working tree, which a worktree child's bash can put there: look for one (find .git -type p). A repository so large that git needs longer can raise the limit with ${GIT_TIMEOUT_VARIABLE} (milliseconds).`,
    );
    this.name = "GitTimedOut";
  }
}

/**
 * Runs git; resolves with its exit code whatever it is (callers decide what a code means). A command
 * that can run a filter or merge driver runs none the repository's own config defines (config-programs.ts).
 * Rejects with GitFileUnreadable, git never started, when a file git opens first is a FIFO, socket or
 * device (git-files.ts), and with GitTimedOut when git runs past the time limit.
 */
export async function runGit(args: readonly string[], options: GitOptions): Promise<GitResult> {
  // A child's own index is never read by pi-flow's git: its changes are kept through a private copy (child-index.ts).
  await assertGitFilesReadable(options.cwd, options.worktree?.gitDir, !options.worktree && !options.env?.GIT_INDEX_FILE);
  const env = gitEnv(options);
  if (!mayRunDriver(args)) return await spawnGit(args, options, env);
  const listed = await spawnGit(["config", "-z", "--includes", "--show-scope", "--get-regexp", PROGRAM_KEYS], { cwd: options.cwd, ...(options.worktree ? { worktree: options.worktree } : {}), maxStdoutBytes: PROGRAM_LISTING_MAX_BYTES }, env);
  // Not all of them read: none of the command runs, rather than one with a driver left in force.
  if (listed.overflowed) return { code: 1, stdout: Buffer.alloc(0), stderr: `the repository's config sets over ${PROGRAM_LISTING_MAX_BYTES} bytes of filter and merge drivers, more than pi-flow reads to keep them from running` };
  // 1: none set. Another failure (no repository here) is the command's own to report.
  return await spawnGit(args, options, listed.code === 0 ? withConfigEntries(env, programOverrides(listed.stdout)) : env);
}

function gitEnv(options: GitOptions): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...IDENTITY, GIT_TERMINAL_PROMPT: "0", LC_ALL: "C", ...NO_TRANSPORT, ...options.env };
  // A parent git (a hook, a test under `git rebase -x`) must not point this one at its repository.
  for (const name of ["GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_PREFIX"]) {
    if (!options.env || !(name in options.env)) delete env[name];
  }
  if (!options.env?.GIT_INDEX_FILE) delete env.GIT_INDEX_FILE;
  return env;
}

function spawnGit(args: readonly string[], options: GitOptions, env: NodeJS.ProcessEnv): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    const pinned = options.worktree ? [`--git-dir=${options.worktree.gitDir}`, `--work-tree=${options.worktree.path}`] : options.findsTop ? [] : [`--work-tree=${options.cwd}`];
    const child = spawn("git", [...HARDENED, ...pinned, ...args], { cwd: options.cwd, env, stdio: ["pipe", "pipe", "pipe"] });
    const limitMs = gitTimeoutMs();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killTree(child.pid); // git, and what it started: `worktree add` runs git again
      // Answered now: a process out of reach may still hold git's output open.
      child.stdout.destroy();
      child.stderr.destroy();
      reject(new GitTimedOut(args[0] ?? "", limitMs));
    }, limitMs);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outBytes = 0;
    let overflowed = false;
    child.stdout.on("data", (chunk: Buffer) => {
      if (overflowed) return;
      outBytes += chunk.length;
      if (options.maxStdoutBytes !== undefined && outBytes > options.maxStdoutBytes) {
        overflowed = true;
        child.kill("SIGKILL");
        return;
      }
      out.push(chunk);
    });
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      if (timedOut) return;
      const result: GitResult = { code: code ?? 1, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString("utf8").trim() };
      resolve(overflowed ? { ...result, overflowed } : result);
    });
    child.stdin.on("error", () => undefined); // git may exit before reading its input
    child.stdin.end(options.input ?? "");
  });
}

/** Runs git and returns its trimmed output; a non-zero exit is an Error naming the command and git's message. */
export async function git(args: readonly string[], options: GitOptions): Promise<string> {
  const result = await runGit(args, options);
  if (result.code !== 0) throw new Error(`git ${args[0] ?? ""} failed: ${result.stderr || `exit ${result.code}`}`);
  return result.stdout.toString("utf8").trim();
}

/** NUL-separated bytes as their fields, kept as bytes (a path need not be UTF-8), the empty tail dropped. */
export function nulBytes(bytes: Buffer): Buffer[] {
  const fields: Buffer[] = [];
  for (let start = 0, end = bytes.indexOf(0); end !== -1; start = end + 1, end = bytes.indexOf(0, start)) fields.push(bytes.subarray(start, end));
  return fields;
}

/** NUL-separated output (`-z`) as its fields, the empty tail dropped. */
export function nulFields(stdout: Buffer): string[] {
  const fields = stdout.toString("utf8").split("\0");
  if (fields.at(-1) === "") fields.pop();
  return fields;
}
