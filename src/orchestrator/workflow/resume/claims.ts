import { randomBytes } from "node:crypto";
import { linkSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { FlowError } from "../../../contract/errors.ts";
import { atomicWriteFile, errorCode, ownerAlive, ownIdentity, readEvidenceText, runFiles, type RunStore, TMP_PREFIX } from "../../../runs/index.ts";

/**
 * A run is resumed at most once. The first resume claims it with a file in its run directory and
 * names the run that continues it once that run exists. A later resume of the same run is refused
 * and pointed at that run: resuming the original again would pay again for every child the first
 * resume ran live. A claim whose process died before its run started is taken over.
 *
 * Every step that decides who holds the claim is one exclusive create (a hard link of a complete
 * file, which fails if the name exists), so any number of resumes racing, in one process or many,
 * have exactly one winner. Claims come in generations: the first is `resumed-by.json`; taking over
 * generation g creates generation g + 1 (`resumed-by.<g+1>.json`), which only one taker can do.
 */
const FIRST_CLAIM = "resumed-by.json";
const LATER_CLAIM = /^resumed-by\.([1-9][0-9]{0,8})\.json$/;

const claimName = (generation: number): string => (generation === 0 ? FIRST_CLAIM : `resumed-by.${generation}.json`);

interface Claim {
  pid: number;
  host: string;
  boot?: string;
  start?: string;
  /** The run that continues the claimed one, once started. */
  runId?: string;
}

export interface ResumeClaim {
  /** The resuming run started: later resumes are pointed at it. */
  started(runId: string): void;
  /** The resuming run never started: the run may be resumed again. */
  release(): void;
}

function readClaim(path: string): Claim | undefined {
  try {
    const value: unknown = JSON.parse(readEvidenceText(path));
    return value !== null && typeof value === "object" ? (value as Claim) : undefined;
  } catch {
    return undefined;
  }
}

/** The newest claim generation in the run directory, or -1 when the run is unclaimed. */
function newestGeneration(dir: string): number {
  let newest = -1;
  for (const name of readdirSync(dir)) {
    if (name === FIRST_CLAIM) newest = Math.max(newest, 0);
    const later = LATER_CLAIM.exec(name);
    if (later) newest = Math.max(newest, Number(later[1]));
  }
  return newest;
}

/** A file system that has no hard links still creates files exclusively, if not whole at once. */
const NO_LINKS = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS"]);

/** Creates `path` with its whole content, or returns false when it exists: never half a claim. */
function createExclusive(dir: string, path: string, content: string): boolean {
  const staged = join(dir, `${TMP_PREFIX}claim-${randomBytes(6).toString("hex")}`);
  writeFileSync(staged, content, { mode: 0o600 });
  try {
    linkSync(staged, path);
    return true;
  } catch (error) {
    const code = errorCode(error) ?? "";
    if (code === "EEXIST") return false;
    if (!NO_LINKS.has(code)) throw error;
  } finally {
    rmSync(staged, { force: true });
  }
  try {
    writeFileSync(path, content, { flag: "wx", mode: 0o600 });
    return true;
  } catch (error) {
    if (errorCode(error) === "EEXIST") return false;
    throw error;
  }
}

const unclaimable = (runId: string, error: unknown): FlowError =>
  new FlowError("run_unavailable", `Run ${runId} cannot be claimed for a resume (${errorCode(error) ?? "error"}).`);

const beingResumed = (runId: string): FlowError =>
  new FlowError("request_invalid", `Run ${runId} is being resumed right now; wait for that resume to start, then resume its run if it stops.`);

export interface ClaimHooks {
  /** Test seam: this resume found a dead claim and is about to take it over. */
  beforeTakeover?(): void;
}

/** Takes the claim of one run directory, or throws why it cannot. */
export function claimRunDirectory(dir: string, runId: string, hooks: ClaimHooks = {}): ResumeClaim {
  const mine: Claim = { pid: process.pid, host: hostname(), ...ownIdentity() };
  let generation: number;
  try {
    generation = takeGeneration(dir, runId, mine, hooks);
  } catch (error) {
    if (error instanceof FlowError) throw error;
    throw unclaimable(runId, error);
  }
  const path = join(dir, claimName(generation));
  return {
    // The run exists already: a claim that cannot name it still holds (no second resume runs).
    started: (resumedBy) => {
      try {
        atomicWriteFile(path, JSON.stringify({ ...mine, runId: resumedBy }), { durable: false });
      } catch {
        // Left as this process's claim: refused as "being resumed" while it lives, taken over after.
      }
    },
    release: () => rmSync(path, { force: true }),
  };
}

function takeGeneration(dir: string, runId: string, mine: Claim, hooks: ClaimHooks): number {
  const newest = newestGeneration(dir);
  if (newest < 0) {
    if (createExclusive(dir, join(dir, FIRST_CLAIM), JSON.stringify(mine))) return 0;
    throw beingResumed(runId); // another resume created it between the listing and now
  }
  const held = readClaim(join(dir, claimName(newest)));
  if (held?.runId) {
    throw new FlowError("request_invalid", `Run ${runId} was already resumed by ${held.runId}: resume ${held.runId} instead (or the newest run of that chain); it continues from where ${runId} stopped.`);
  }
  // Unreadable: released just now, or (with no hard links) still being written.
  const here = held?.host === mine.host && held.pid === process.pid;
  if (held === undefined || here || ownerAlive(held)) throw beingResumed(runId);
  // Its process died before the run started: the next generation goes to exactly one taker.
  hooks.beforeTakeover?.();
  const next = newest + 1;
  // Older generations stay: a resume that listed long ago and tries to take one finds it taken.
  if (!createExclusive(dir, join(dir, claimName(next)), JSON.stringify(mine))) throw beingResumed(runId);
  return next;
}

export function claimResume(store: RunStore, runId: string): ResumeClaim {
  return claimRunDirectory(runFiles(store.scope, runId).dir, runId);
}
