import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { FlowError } from "../contract/errors.ts";
import { ownerAlive, runFiles, type RunStore } from "../runs/index.ts";

/**
 * A run is resumed at most once. The first resume claims it with a file in its run directory,
 * created exclusively (so two resumes started at once, in one process or two, cannot both run),
 * and names the run that continues it once that run exists. A later resume of the same run is
 * refused and pointed at that run: resuming the original again would pay again for every child
 * the first resume ran live. A claim whose process died before its run started is taken over.
 */
const CLAIM_FILE = "resumed-by.json";

interface Claim {
  pid: number;
  host: string;
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
    const value: unknown = JSON.parse(readFileSync(path, "utf8"));
    return value !== null && typeof value === "object" ? (value as Claim) : undefined;
  } catch {
    return undefined;
  }
}

const unclaimable = (runId: string, error: unknown): FlowError =>
  new FlowError("run_unavailable", `Run ${runId} cannot be claimed for a resume (${(error as NodeJS.ErrnoException).code ?? "error"}).`);

export function claimResume(store: RunStore, runId: string): ResumeClaim {
  const path = join(runFiles(store.scope, runId).dir, CLAIM_FILE);
  const mine: Claim = { pid: process.pid, host: hostname() };
  try {
    writeFileSync(path, JSON.stringify(mine), { flag: "wx", mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw unclaimable(runId, error);
    const held = readClaim(path);
    if (held?.runId) {
      throw new FlowError("request_invalid", `Run ${runId} was already resumed by ${held.runId}: resume ${held.runId} instead (or the newest run of that chain); it continues from where ${runId} stopped.`);
    }
    const here = held?.host === mine.host && held.pid === process.pid;
    if (held === undefined || here || ownerAlive(held)) {
      throw new FlowError("request_invalid", `Run ${runId} is being resumed right now; wait for that resume to start, then resume its run if it stops.`);
    }
    try {
      writeFileSync(path, JSON.stringify(mine), { mode: 0o600 }); // its process died before the run started
    } catch (error) {
      throw unclaimable(runId, error);
    }
  }
  return {
    // The run exists already: a claim that cannot name it still holds (no second resume runs).
    started: (resumedBy) => {
      try {
        writeFileSync(path, JSON.stringify({ ...mine, runId: resumedBy }), { mode: 0o600 });
      } catch {
        // Left as this process's claim: refused as "being resumed" while it lives, taken over after.
      }
    },
    release: () => rmSync(path, { force: true }),
  };
}
