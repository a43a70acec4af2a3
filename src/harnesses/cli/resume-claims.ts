import { createHash, randomBytes } from "node:crypto";
import { linkSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { processGlobal } from "../../../runtime/process-global.ts";
import { errorCode, ownerAlive, ownIdentity, TMP_PREFIX } from "../../runs/index.ts";

/**
 * The CLI sessions being continued in place, by harness and session id. A CLI that cannot fork a
 * session on resume (codex: `exec resume` continues the thread itself) would have two resumes of
 * one thread write into it, each seeing the other's turns: the second is refused while the first
 * runs, in this process or in any other of this user on this host.
 *
 * Across processes a claim is a file in a private folder of the user's temp directory, made by one
 * exclusive create (a hard link of a complete file), so of any number of claimers started together
 * exactly one wins. A claim whose process died is taken over: claims come in generations
 * (`<thread>.0`, `<thread>.1`, …) and taking over generation g creates g + 1, which only one taker can.
 */
const continuing = processGlobal("pi-flow.cli-resumed-sessions", () => new Set<string>());

/** Where claims are kept by default: `<tmp>/pi-flow-<uid>/cli-threads`, made private to this user. */
export function defaultClaimsDir(): string {
  const user = process.getuid?.() ?? userInfo().username;
  return join(tmpdir(), `pi-flow-${user}`, "cli-threads");
}

/**
 * The claims folder, made if missing; undefined when it is not this user's alone (another user made
 * it, or it is a link): a claim there could be removed or faked by someone else.
 */
function privateDir(dir: string): string | undefined {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    for (const path of [join(dir, ".."), dir]) {
      const stats = lstatSync(path);
      if (!stats.isDirectory() || (process.getuid !== undefined && stats.uid !== process.getuid()) || (stats.mode & 0o022) !== 0) return undefined;
    }
    return dir;
  } catch {
    return undefined;
  }
}

interface Owner {
  pid?: unknown;
  host?: unknown;
  boot?: unknown;
  start?: unknown;
}

/** The claim file's owner; "gone" when it was released meanwhile. */
function readOwner(path: string): Owner | "gone" | "unreadable" {
  try {
    const value: unknown = JSON.parse(readFileSync(path, "utf8"));
    return value !== null && typeof value === "object" ? (value as Owner) : "unreadable";
  } catch (error) {
    return errorCode(error) === "ENOENT" ? "gone" : "unreadable";
  }
}

/** Creates `path` with its whole content, or returns false when it exists: a reader never sees half a claim. */
function createExclusive(dir: string, path: string, content: string): boolean {
  const staged = join(dir, `${TMP_PREFIX}${randomBytes(6).toString("hex")}`);
  writeFileSync(staged, content, { mode: 0o600, flag: "wx" });
  try {
    linkSync(staged, path);
    return true;
  } catch (error) {
    if (errorCode(error) === "EEXIST") return false;
    throw error;
  } finally {
    rmSync(staged, { force: true });
  }
}

/** The newest generation of the thread's claim, or -1 when it has none. */
function newestGeneration(dir: string, stem: string): number {
  let newest = -1;
  for (const name of readdirSync(dir)) {
    if (!name.startsWith(`${stem}.`)) continue;
    const generation = Number(name.slice(stem.length + 1));
    if (Number.isSafeInteger(generation) && generation >= 0) newest = Math.max(newest, generation);
  }
  return newest;
}

/** Takes the thread's claim file, or returns undefined when a live process (this one included) holds it. */
function claimFile(dir: string, stem: string): string | undefined {
  const content = JSON.stringify({ pid: process.pid, host: hostname(), ...ownIdentity() });
  // A claim released between the listing and the read is looked at again; twice is plenty.
  for (let attempt = 0; attempt < 3; attempt++) {
    const newest = newestGeneration(dir, stem);
    if (newest >= 0) {
      const held = readOwner(join(dir, `${stem}.${newest}`));
      if (held === "gone") continue;
      // A claim is written whole (createExclusive): an unreadable one is damaged, not half-written, and is taken over.
      if (held !== "unreadable" && ownerAlive(held)) return undefined;
    }
    const path = join(dir, `${stem}.${newest + 1}`);
    return createExclusive(dir, path, content) ? path : undefined;
  }
  return undefined;
}

export type ClaimAnswer = { release: () => void } | { refused: string };

/**
 * Claims the session for one run, or says why it cannot: another run holds it (in this process or
 * another), or the claims folder is not private. Call release when the run ends.
 */
export function claimSession(harness: string, sessionId: string, dir = defaultClaimsDir()): ClaimAnswer {
  const key = `${harness}\0${sessionId}`;
  const held = `${harness} thread ${sessionId} is being continued by another run`;
  if (continuing.has(key)) return { refused: held };
  const folder = privateDir(dir);
  if (folder === undefined) return { refused: `${harness} thread ${sessionId} cannot be claimed: ${dir} is not a folder of this user's alone` };
  // Hashed: a session id is any length, a file name is not.
  const stem = `${harness}-${createHash("sha256").update(sessionId).digest("hex").slice(0, 32)}`;
  let path: string | undefined;
  try {
    path = claimFile(folder, stem);
  } catch (error) {
    return { refused: `${harness} thread ${sessionId} cannot be claimed (${errorCode(error) ?? "error"} in ${folder})` };
  }
  if (path === undefined) return { refused: held };
  continuing.add(key);
  const claimed = path;
  return {
    release: () => {
      continuing.delete(key);
      rmSync(claimed, { force: true });
    },
  };
}
