/**
 * One coordinator at a time per workflow run on the fleet. A run's children are named after the
 * run that began its chain (`<rootRunId>/agent/<i>`), so two coordinators replaying it (a resume
 * from another host while the first still runs it, which the run store there cannot see alive)
 * would wait on the same children: each child runs once (its ID is taken), but both would take its
 * answer, its saved session and its undelivered steers, and each would go on to the script's next
 * step. So a coordinator claims the root in `pi_flow.coordinators` while a child of it waits, and
 * beats there; another coordinator is refused while that claim is heard from, unless its process
 * is certainly gone (same host, no such process) or silent for SILENT_AFTER_SECONDS.
 *
 * Contract with the caller: `ensureCoordinatorsTable` runs under the migration lock (dbos-load.ts).
 */
import { hostname } from "node:os";
import type { Client, Pool, PoolClient } from "pg";
import { FlowError } from "../contract/errors.ts";
import { ownerAlive, ownIdentity } from "../runs/index.ts";
import { SILENT_AFTER_SECONDS } from "./heartbeats.ts";

type Queryable = Pick<Client | Pool | PoolClient, "query">;

export async function ensureCoordinatorsTable(db: Queryable): Promise<void> {
  await db.query(
    "CREATE TABLE IF NOT EXISTS pi_flow.coordinators (root text PRIMARY KEY, instance text NOT NULL, host text NOT NULL, pid integer NOT NULL, boot text, start text, seen_at timestamptz NOT NULL DEFAULT now())",
  );
}

/** The run whose chain a child belongs to: its workflow ID up to `/agent/<i>` or `/delegate`. */
export function rootOf(workflowId: string): string {
  const cut = workflowId.search(/\/(agent\/\d+|delegate)$/);
  return cut > 0 ? workflowId.slice(0, cut) : workflowId;
}

interface Holder {
  instance: string;
  host: string;
  pid: number;
  boot: string | null;
  start: string | null;
  silent_for: number;
}

/** Whether the holder's process still runs, as far as this host can tell: one on another host is trusted until silent. */
function holderAlive(holder: Holder): boolean {
  if (holder.host !== hostname()) return true;
  if (holder.pid === process.pid) return true; // another coordinator of this very process
  return ownerAlive({ pid: holder.pid, host: holder.host, ...(holder.boot ? { boot: holder.boot } : {}), ...(holder.start ? { start: holder.start } : {}) });
}

/**
 * Claims `root` for the coordinator `instance`, or throws request_invalid naming the live
 * coordinator that holds it. A claim whose process is gone or silent is taken over.
 */
export async function claimRoot(db: Queryable, root: string, instance: string): Promise<void> {
  const { boot, start } = ownIdentity();
  const values = [root, instance, hostname(), process.pid, boot ?? null, start ?? null, SILENT_AFTER_SECONDS];
  const claimed = await db.query(
    `INSERT INTO pi_flow.coordinators AS c (root, instance, host, pid, boot, start) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (root) DO UPDATE SET instance = $2, host = $3, pid = $4, boot = $5, start = $6, seen_at = now()
     WHERE c.instance = $2 OR c.seen_at < now() - make_interval(secs => $7) RETURNING 1`,
    values,
  );
  if (claimed.rows.length > 0) return;
  const { rows } = await db.query<Holder>(
    "SELECT instance, left(host, 256) AS host, pid, left(boot, 64) AS boot, left(start, 64) AS start, EXTRACT(EPOCH FROM now() - seen_at)::int AS silent_for FROM pi_flow.coordinators WHERE root = $1",
    [root],
  );
  const holder = rows[0];
  if (holder === undefined) return claimRoot(db, root, instance); // released meanwhile
  if (!holderAlive(holder)) {
    // Its process is gone: taken over at once, by one claimer only (the row must still be the dead one's).
    const taken = await db.query(
      "UPDATE pi_flow.coordinators SET instance = $2, host = $3, pid = $4, boot = $5, start = $6, seen_at = now() WHERE root = $1 AND instance = $7 RETURNING 1",
      [...values.slice(0, 6), holder.instance],
    );
    if (taken.rows.length > 0) return;
    return claimRoot(db, root, instance);
  }
  throw new FlowError(
    "request_invalid",
    `Run ${root}'s children are being waited on by another live coordinator (process ${holder.pid} on ${holder.host}, heard from ${holder.silent_for} s ago): ` +
      `two would each take their answers and go on with the script. Wait for that run or cancel it there before resuming it here; a coordinator that is killed is taken over once its process is gone (on this host at once, on another after ${SILENT_AFTER_SECONDS} s).`,
  );
}

/**
 * Says the coordinator still waits on children of these roots; a claim a release of this
 * coordinator's deleted as another child of the root was being held is written again.
 */
export async function beatRoots(db: Queryable, roots: readonly string[], instance: string): Promise<void> {
  if (roots.length === 0) return;
  const { boot, start } = ownIdentity();
  await db.query(
    `INSERT INTO pi_flow.coordinators AS c (root, instance, host, pid, boot, start) SELECT r, $2, $3, $4, $5, $6 FROM unnest($1::text[]) AS r
     ON CONFLICT (root) DO UPDATE SET seen_at = now() WHERE c.instance = $2`,
    [roots, instance, hostname(), process.pid, boot ?? null, start ?? null],
  );
}

/** No child of `root` waits on this coordinator any more: another may take the run on. */
export async function releaseRoot(db: Queryable, root: string, instance: string): Promise<void> {
  await db.query("DELETE FROM pi_flow.coordinators WHERE root = $1 AND instance = $2", [root, instance]);
}

/** The coordinator closes: every run it claimed may be taken on by another. */
export async function releaseInstance(db: Queryable, instance: string): Promise<void> {
  await db.query("DELETE FROM pi_flow.coordinators WHERE instance = $1", [instance]);
}

/** How long a claim no coordinator beats stays: a killed coordinator's claim would otherwise stay for good. */
export const SILENT_CLAIM_KEPT_SECONDS = 15 * 60;

/**
 * Deletes the claims silent for SILENT_CLAIM_KEPT_SECONDS (a worker's sweep): their coordinators
 * were killed. One alive after all (a long outage) writes its claim again at its next beat.
 */
export async function deleteSilentClaims(db: Queryable, keptSeconds = SILENT_CLAIM_KEPT_SECONDS): Promise<void> {
  await db.query("DELETE FROM pi_flow.coordinators WHERE seen_at < now() - make_interval(secs => $1)", [keptSeconds]);
}
