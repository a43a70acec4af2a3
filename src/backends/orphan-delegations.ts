/**
 * Delegations whose coordinator is gone. A delegation's child (`<runId>/delegate`) is read by the
 * coordinator that sent it (a Pi session) and by no one else: no `resume` attaches to it, unlike a
 * workflow's children, which `flow run --resume` takes on. A coordinator claims the child's run in
 * pi_flow.coordinators while it waits and beats there (coordinator-claims.ts); when that claim has
 * been silent (or gone) for COORDINATOR_GONE_SECONDS, the Pi process was killed or its machine
 * lost, and a worker's sweep cancels the child as a coordinator's cancel does: its worker stops it,
 * instead of it running on for no one, and its rows go with the settled children's.
 *
 * A database that was away looks to the sweep as if every coordinator had gone silent: so a child
 * is cancelled only once this worker has seen its claim's silence unchanged for GONE_SEEN_MS of its
 * own time, in which a live coordinator beats again (every HEARTBEAT_MS).
 */
import type { Pool } from "pg";
import { HEARTBEAT_MS } from "./heartbeats.ts";
import { CHILD_QUEUE, CHILD_WORKFLOW } from "./names.ts";

/** How long a delegation's coordinator may be silent before its child is cancelled: a network split shorter than this cancels nothing. */
export const COORDINATOR_GONE_SECONDS = 120;

/** How long a worker watches a silent claim before it cancels (its own clock: a beat lands within it once the database is back). */
export const GONE_SEEN_MS = 2 * HEARTBEAT_MS;

/** A delegation's run: its workflow ID without `/delegate`; the claim's root (coordinator-claims.ts rootOf). */
const ROOT = "left(w.workflow_uuid, length(w.workflow_uuid) - length('/delegate'))";

/** Unsettled delegations of the fleet's queue whose coordinator's claim is silent past the bound, or missing. */
const ORPHANED = `w.name = $1 AND w.queue_name = $2 AND w.status IN ('ENQUEUED', 'PENDING', 'DELAYED') AND w.workflow_uuid LIKE '%/delegate'
  AND w.created_at < (EXTRACT(EPOCH FROM now()) * 1000)::bigint - $3::bigint * 1000
  AND NOT EXISTS (SELECT 1 FROM pi_flow.coordinators c WHERE c.root = ${ROOT} AND c.seen_at >= now() - make_interval(secs => $3))`;

/**
 * One worker's sweep of orphaned delegations: each call finds them, and cancels those it has seen
 * orphaned, with the same claim, for GONE_SEEN_MS (the statement checks the claim again). Returns
 * the children it cancelled.
 */
export function orphanSweep(pool: Pool, { goneSeconds = COORDINATOR_GONE_SECONDS, seenMs = GONE_SEEN_MS, dbosSchema = "dbos" } = {}): () => Promise<string[]> {
  /** Each orphan seen, with its claim's last beat as then read, and since when (this worker's clock). */
  const seen = new Map<string, { beat: string | null; since: number }>();
  return async () => {
    const { rows } = await pool.query<{ workflow_uuid: string; beat: string | null }>(
      `SELECT w.workflow_uuid, (SELECT c.seen_at::text FROM pi_flow.coordinators c WHERE c.root = ${ROOT}) AS beat
       FROM "${dbosSchema}".workflow_status w WHERE ${ORPHANED}`,
      [CHILD_WORKFLOW, CHILD_QUEUE, goneSeconds],
    );
    const now = Date.now();
    const due: string[] = [];
    const found = new Set(rows.map((row) => row.workflow_uuid));
    for (const id of seen.keys()) if (!found.has(id)) seen.delete(id);
    for (const { workflow_uuid: id, beat } of rows) {
      const earlier = seen.get(id);
      if (earlier && earlier.beat === beat && now - earlier.since >= seenMs) due.push(id);
      else if (!earlier || earlier.beat !== beat) seen.set(id, { beat, since: now });
    }
    if (due.length === 0) return [];
    // As DBOS's cancelWorkflow marks a child, in one statement that checks the claim again.
    const { rows: cancelled } = await pool.query<{ workflow_uuid: string }>(
      `UPDATE "${dbosSchema}".workflow_status w SET status = 'CANCELLED', owner_xid = NULL, queue_name = NULL, deduplication_id = NULL,
         started_at_epoch_ms = NULL, updated_at = (EXTRACT(EPOCH FROM now()) * 1000)::bigint
       WHERE w.workflow_uuid = ANY($4) AND ${ORPHANED} RETURNING w.workflow_uuid`,
      [CHILD_WORKFLOW, CHILD_QUEUE, goneSeconds, due],
    );
    for (const id of due) seen.delete(id);
    return cancelled.map((row) => row.workflow_uuid);
  };
}
