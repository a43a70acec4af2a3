/**
 * What the database says of the children one worker holds, in DBOS's own table: read by the
 * worker's sweep (children whose end DBOS did not record) and by its stop, which hands them back.
 */
import type { Pool } from "pg";
import { FlowError } from "../contract/errors.ts";
import { forget, SILENT_AFTER_SECONDS, type WorkerIdentity } from "./heartbeats.ts";
import { requeueHeld } from "./requeue.ts";
import { CHILD_QUEUE } from "./names.ts";

/**
 * The children that ended on this worker and are still PENDING under its name in the database, a
 * sweep after they ended: DBOS's own write of their end failed (a statement the server cancelled at
 * its statement_timeout is not retried), and no takeover would ever come for them, since this worker
 * beats on. The workflow IDs are given with when each ended here.
 */
export async function unrecordedEnds(pool: Pool, worker: string, ended: ReadonlyMap<string, number>, now: number, sweepMs: number, dbosSchema = "dbos"): Promise<{ stuck: string[]; settled: string[] }> {
  const due = [...ended].filter(([, at]) => now - at >= sweepMs).map(([id]) => id);
  if (due.length === 0) return { stuck: [], settled: [] };
  const { rows } = await pool.query<{ workflow_uuid: string }>(
    `SELECT workflow_uuid FROM "${dbosSchema}".workflow_status WHERE workflow_uuid = ANY($1) AND status = 'PENDING' AND executor_id = $2`,
    [due, worker],
  );
  const stuck = new Set(rows.map((row) => row.workflow_uuid));
  return { stuck: [...stuck], settled: due.filter((id) => !stuck.has(id)) };
}

/** The children DBOS has marked as running on this worker (PENDING under its executor ID), whatever ran of them here. */
export async function heldChildren(pool: Pool, worker: string, dbosSchema = "dbos"): Promise<string[]> {
  const { rows } = await pool.query<{ workflow_uuid: string }>(
    `SELECT workflow_uuid FROM "${dbosSchema}".workflow_status WHERE status = 'PENDING' AND queue_name = $1 AND executor_id = $2`,
    [CHILD_QUEUE, worker],
  );
  return rows.map((row) => row.workflow_uuid);
}

/**
 * Puts the children the database says this worker holds back on the queue, then deletes the
 * worker's row: if that fails (or the process dies first), the row stays, goes silent, and a sweep
 * takes them over.
 */
export async function handBack(pool: Pool, beats: Pool, me: WorkerIdentity): Promise<void> {
  // What the database says this worker holds (PENDING under its name): also a child DBOS took
  // off the queue as the stop began whose run never started here (once this worker's row goes,
  // no sweep would take it over), and not one cancelled meanwhile (a resume would run it again).
  await requeueHeld(pool, await heldChildren(pool, me.name), [me.name]);
  await forget(beats, me).catch(() => undefined);
}

/** Whether `work` ends within `ms` (its failure counts as an answer, and is thrown). */
export async function answersWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([work.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** A stop the database did not answer, or refused: the worker's row stays, so a sweep takes its children over once it is silent. */
export function notHandedBack(worker: string, ids: readonly string[], ms: number, refusal?: unknown): FlowError {
  const which = ids.length > 0 ? ` (${ids.join(", ")})` : "";
  const why = refusal === undefined ? `the database did not answer within ${ms / 1000} s` : `the database refused it (${refusal instanceof Error ? refusal.message : String(refusal)})`;
  return new FlowError(
    "failed",
    `flow worker ${worker} stopped without handing back its children${which}: ${why}. ` +
      `Its row stays in pi_flow.workers: once it is silent for ${SILENT_AFTER_SECONDS} s, another worker's sweep puts them back on the queue.`,
  );
}

/** A worker whose name another process took while this one was not heard from: it stopped, handing back nothing. */
export function nameTaken(worker: string, ids: readonly string[]): FlowError {
  const which = ids.length > 0 ? ` Its children (${ids.join(", ")}) were stopped here and not handed back: the other worker runs them, or its sweep puts them back.` : "";
  return new FlowError(
    "failed",
    `flow worker ${worker} stopped: another flow worker took the name ${worker} while this one was not heard from for ${SILENT_AFTER_SECONDS} s, and two workers of one name would run each other's children again.${which} Give each worker its own --name.`,
  );
}
