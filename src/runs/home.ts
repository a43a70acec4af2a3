import { createHash } from "node:crypto";
import { readdirSync, realpathSync } from "node:fs";
import { basename, join, resolve, sep } from "node:path";

/**
 * Where runs live:
 *
 *   <home>/projects/<projectKey>/sessions/<sessionKey>/runs/<runId>/
 *
 * The project key is a readable slug of the project's directory name plus a hash of its real path,
 * so two checkouts named alike never share runs and a symlinked cwd maps to the same project. The
 * session key comes from Pi's session ID. A run is only ever looked up inside the caller's own
 * project and session directory, which is what makes another session's run indistinguishable from
 * an unknown one.
 */
export interface RunScope {
  home: string;
  projectKey: string;
  sessionKey: string;
}

export function resolveFlowHome(env: Record<string, string | undefined>, agentDir: string): string {
  const fromEnv = env.PI_FLOW_HOME?.trim();
  return resolve(fromEnv ? fromEnv : join(agentDir, "flow"));
}

function hash(text: string, length: number): string {
  return createHash("sha256").update(text).digest("hex").slice(0, length);
}

function slug(text: string): string {
  const cleaned = text
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, "-")
    .replace(/^[-.]+|[-.]+$/g, "")
    .slice(0, 40);
  return cleaned || "root";
}

export function projectKey(cwd: string): string {
  let real: string;
  try {
    real = realpathSync(cwd);
  } catch {
    real = resolve(cwd); // a cwd that vanished still maps deterministically
  }
  return `${slug(basename(real))}-${hash(real, 16)}`;
}

const SAFE_SESSION = /^[A-Za-z0-9][A-Za-z0-9_-]{0,79}$/;

/** Pi's session IDs are UUIDs; anything else is hashed so it can never shape a path. */
export function sessionKey(sessionId: string): string {
  if (sessionId.length === 0) throw new Error("sessionKey: empty session ID");
  return SAFE_SESSION.test(sessionId) ? sessionId : `s-${hash(sessionId, 24)}`;
}

export function makeScope(home: string, cwd: string, sessionId: string): RunScope {
  return { home: resolve(home), projectKey: projectKey(cwd), sessionKey: sessionKey(sessionId) };
}

export const projectsDir = (home: string): string => join(home, "projects");
export const projectDir = (home: string, project: string): string => join(projectsDir(home), project);
export const sessionsDir = (home: string, project: string): string => join(projectDir(home, project), "sessions");

/** Whether a name under `sessions/` is a session's folder, as sessionKey names one. */
export const isSessionKey = (name: string): boolean => SAFE_SESSION.test(name);

/** The `flow` command's own Pi session, in its session's folder (src/command-line/flow-session-file.ts). */
export const FLOW_SESSION_FILE = "flow-session.jsonl";

/** The session keys that have a run folder in the project of `cwd`: every session, for the `flow` command. */
export function projectSessionKeys(home: string, cwd: string): string[] {
  try {
    return readdirSync(sessionsDir(resolve(home), projectKey(cwd))).filter((name) => SAFE_SESSION.test(name)).sort();
  } catch {
    return []; // no run in this project yet
  }
}

/** Every run of a session lives here; the path is joined once per scope, not for every file of every run. */
const runsDirs = new WeakMap<RunScope, string>();

export function runsDir(scope: RunScope): string {
  let dir = runsDirs.get(scope);
  if (dir === undefined) {
    dir = join(sessionsDir(scope.home, scope.projectKey), scope.sessionKey, "runs");
    runsDirs.set(scope, dir);
  }
  return dir;
}

/** Stable short token naming a scope inside cursors; not a secret, only a binding. */
export function scopeToken(scope: RunScope): string {
  return hash(`${scope.home}\0${scope.projectKey}\0${scope.sessionKey}`, 16);
}

/** The files of one run. Callers pass an ID that already passed `assertRunId`. */
export interface RunFiles {
  dir: string;
  record: string;
  journal: string;
  output: string;
  diagnostics: string;
  final: string;
  /** Worktree isolation: the child's changes as a redacted patch (the `patch` view), and their state. */
  patch: string;
  changes: string;
}

export function runFiles(scope: RunScope, runId: string): RunFiles {
  // The folder is joined once; its files are plain names inside it (asked for several times per child).
  const dir = join(runsDir(scope), runId);
  const inDir = (name: string) => `${dir}${sep}${name}`;
  return {
    dir,
    record: inDir("record.json"),
    journal: inDir("journal.jsonl"),
    output: inDir("output.log"),
    diagnostics: inDir("diagnostics.log"),
    final: inDir("final.data"),
    patch: inDir("patch.diff"),
    changes: inDir("changes.json"),
  };
}
