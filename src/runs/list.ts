import { readdirSync } from "node:fs";
import type { Static } from "@sinclair/typebox";
import { FlowError } from "../contract/errors.ts";
import type { RunView } from "../contract/run-schema.ts";
import type { ListPayloadSchema } from "../contract/runs-schema.ts";
import { decodeListCursor, encodeCursor, type ListCursor } from "./cursor.ts";
import { resolveFacts, type FactsContext } from "./facts.ts";
import { runsDir } from "./home.ts";
import { isRunId, type RunKind } from "./ids.ts";
import { buildView } from "./view.ts";

export type ListPayload = Static<typeof ListPayloadSchema>;

export const DEFAULT_LIST_LIMIT = 20;
export const MAX_LIST_LIMIT = 500;

const PREFIX: Record<RunKind, string> = { agent: "ag_", workflow: "wf_" };

/**
 * Saved runs of one kind, newest first. Run IDs start with a fixed-width start time, so the names
 * alone give the order and a page reads only the records it shows.
 */
export function savedRunIds(names: readonly string[], kind: RunKind): string[] {
  const prefix = PREFIX[kind];
  return names
    .filter((name) => name.startsWith(prefix) && isRunId(name))
    .sort()
    .reverse();
}

function readRunNames(ctx: FactsContext): string[] {
  try {
    return readdirSync(runsDir(ctx.scope));
  } catch {
    return []; // no run saved in this session yet
  }
}

interface StreamPage {
  rows: RunView[];
  next?: string;
}

/**
 * One stream (agent runs or workflows). Stage 1 serves live runs that have no saved evidence yet,
 * newest first; its cursor bookmarks the last one served, so a run saved between pages is never
 * skipped (it may appear twice: live, then from its record). Stage 2 serves saved runs newest
 * first; its cursor bookmarks the last ID served, so runs started after the listing reached its
 * saved rows wait for the next fresh listing.
 */
function listStream(
  ctx: FactsContext,
  names: readonly string[],
  kind: RunKind,
  limit: number,
  cursor: ListCursor | undefined,
): StreamPage {
  const saved = savedRunIds(names, kind);
  const savedSet = new Set(saved);
  const registered = ctx.registry.entries(ctx.scopeToken, kind).reverse();
  const rows: RunView[] = [];
  const cursorFor = (st: "live" | "saved", a: string) => encodeCursor({ k: "list", s: ctx.scopeToken, n: kind, st, a });

  if (!cursor || cursor.st === "live") {
    let from = 0;
    if (cursor) {
      const bookmark = cursor.a;
      const at = registered.findIndex((entry) => entry.runId === bookmark);
      if (at < 0)
        throw new FlowError(
          "cursor_stale",
          "The run this list cursor continues from has left the live registry. Restart without a cursor.",
        );
      from = at + 1;
    }
    const unsaved = registered.slice(from).filter((entry) => entry.status !== "settled" && !savedSet.has(entry.runId));
    for (const entry of unsaved) {
      if (rows.length === limit) return { rows, next: cursorFor("live", rows[rows.length - 1]?.runId ?? entry.runId) };
      rows.push(buildView(resolveFacts(ctx, entry.runId)));
    }
    cursor = undefined;
  }

  const after = cursor?.a;
  const ids = after === undefined ? saved : saved.filter((id) => id < after);
  let last: string | undefined;
  for (const runId of ids) {
    if (rows.length === limit) {
      // Full before any saved row: bookmark the last live row, so the next page starts saved rows afresh.
      const bookmark = last ? cursorFor("saved", last) : cursorFor("live", rows[rows.length - 1]?.runId ?? runId);
      return { rows, next: bookmark };
    }
    try {
      rows.push(buildView(resolveFacts(ctx, runId)));
    } catch (error) {
      // A directory with nothing readable in it (a create that died before its start line) is not a run.
      if (!(error instanceof FlowError && error.code === "run_unavailable")) throw error;
    }
    last = runId;
  }
  return { rows };
}

export function listRuns(
  ctx: FactsContext,
  opts: { limit?: number; cursor?: string; workflowCursor?: string } = {},
): ListPayload {
  const limit = opts.limit ?? DEFAULT_LIST_LIMIT;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) {
    throw new FlowError("request_invalid", `limit must be an integer from 1 to ${MAX_LIST_LIMIT}.`);
  }
  const runCursor =
    opts.cursor === undefined ? undefined : decodeListCursor(opts.cursor, { scope: ctx.scopeToken, stream: "agent" });
  const wfCursor =
    opts.workflowCursor === undefined
      ? undefined
      : decodeListCursor(opts.workflowCursor, { scope: ctx.scopeToken, stream: "workflow" });
  const names = readRunNames(ctx); // one directory scan serves both streams
  const runs = listStream(ctx, names, "agent", limit, runCursor);
  const workflows = listStream(ctx, names, "workflow", limit, wfCursor);
  const payload: ListPayload = { runs: runs.rows, workflows: workflows.rows };
  if (runs.next) payload.nextCursor = runs.next;
  if (workflows.next) payload.nextWorkflowCursor = workflows.next;
  return payload;
}
