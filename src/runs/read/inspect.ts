import type { Static } from "@sinclair/typebox";
import { succeed } from "../../contract/envelope.ts";
import { FlowError } from "../../contract/errors.ts";
import type { RunView } from "../../contract/run-schema.ts";
import { RUN_VIEWS, type BatchPayloadSchema, type SinglePayloadSchema } from "../../contract/runs-schema.ts";
import { decodeBatchCursor, decodePageCursor, encodeCursor, targetsHash } from "./cursor.ts";
import { finalDocumentText, finalFileDocument, logDocument } from "../journal/evidence.ts";
import { resolveFacts, unavailable, type FactsContext, type RunFacts } from "./facts.ts";
import { lstatOrNull, statOrNull } from "../fsio.ts";
import { runFiles } from "../home.ts";
import { assertRunId } from "../ids.ts";
import { launchDocument } from "../journal/launch-document.ts";
import { assertFresh, memoryDocument, readPage, type ViewDocument } from "./paging.ts";
import { buildView, formatRunText, outputWarnings } from "./view.ts";
import { callsDocument } from "./calls.ts";

export type BatchPayload = Static<typeof BatchPayloadSchema>;
export type SinglePayload = Static<typeof SinglePayloadSchema>;
export type RunViewName = (typeof RUN_VIEWS)[number];

export const DEFAULT_PAGE_BYTES = 16 * 1024;
/**
 * The most one page, batch or wait text spends, whatever limitBytes asks: a page is only bounded
 * by limitBytes, so a smaller one keeps the contract, and the evidence a call reads and hands to
 * the model stays bounded (a 600 MiB log asked for whole would not fit in a string).
 */
export const MAX_PAGE_BYTES = 4 * 1024 * 1024;
export const MAX_BATCH_TARGETS = 100;

export type InspectContext = FactsContext;

export function assertLimitBytes(value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  // Any whole number the schema lets through is served, cut to the largest page (wait does the same).
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1) {
    throw new FlowError("request_invalid", "limitBytes must be a positive integer.");
  }
  return Math.min(value, MAX_PAGE_BYTES);
}

export function assertView(value: unknown): RunViewName {
  if (value === undefined) return "summary";
  if (typeof value === "string" && (RUN_VIEWS as readonly string[]).includes(value)) return value as RunViewName;
  throw new FlowError("request_invalid", `Unknown view ${JSON.stringify(value)}; expected one of ${RUN_VIEWS.join(", ")}.`);
}

export function assertTargets(runIds: unknown, max: number): string[] {
  if (!Array.isArray(runIds) || runIds.length === 0) throw new FlowError("request_invalid", "runIds must name at least one run.");
  if (runIds.length > max) throw new FlowError("request_invalid", `At most ${max} runIds per call; got ${runIds.length}.`);
  const ids = runIds.map(assertRunId);
  if (new Set(ids).size !== ids.length) throw new FlowError("request_invalid", "runIds lists a run more than once.");
  return ids;
}

// ---------------------------------------------------------------------------------------------
// Batch (summary) inspection

/** The legacy text of a batch page; tools must send exactly this as `content` for the byte rule to hold. */
const ENTRY_SEPARATOR = "\n\n";
const ENTRY_SEPARATOR_BYTES = ENTRY_SEPARATOR.length;
const moreRunsText = (nextCursor: string) => `${ENTRY_SEPARATOR}More runs follow: call again with cursor ${JSON.stringify(nextCursor)}.`;

export function formatBatchText(entries: readonly RunView[], nextCursor?: string): string {
  const body = entries.map(formatRunText).join(ENTRY_SEPARATOR);
  return nextCursor ? `${body}${moreRunsText(nextCursor)}` : body;
}


const bytes = (text: string): number => Buffer.byteLength(text, "utf8");

/**
 * The envelope of a batch page of `entries`, measured without them: the real envelope with an
 * empty entries array (observedAt has a fixed width, and the warnings are the entries'), to which
 * each entry's JSON and the commas between them add exactly.
 */
function emptyEnvelopeBytes(entries: readonly RunView[], nextCursor: string | undefined): number {
  const payload: BatchPayload = nextCursor ? { mode: "batch", entries: [], nextCursor } : { mode: "batch", entries: [] };
  return bytes(JSON.stringify(succeed("external_runs", "inspect", payload, outputWarnings(entries))));
}

/**
 * Serve runs in request order while each one fits `limitBytes` in both channels (legacy text and
 * structured envelope), measured with the cursor the page would carry. Every target exists or the
 * whole call is `run_unavailable`; none is ever dropped, and one that cannot fit alone is
 * `page_too_small`.
 */
export function inspectBatch(
  ctx: InspectContext,
  runIds: unknown,
  opts: { limitBytes?: number; cursor?: string } = {},
): BatchPayload {
  const targets = assertTargets(runIds, MAX_BATCH_TARGETS);
  const limit = assertLimitBytes(opts.limitBytes, 32 * 1024);
  const binding = { scope: ctx.scopeToken, targets: targetsHash(targets) };
  let index = 0;
  if (opts.cursor !== undefined) {
    index = decodeBatchCursor(opts.cursor, binding).i;
    if (index >= targets.length) throw new FlowError("cursor_invalid", "Invalid cursor: it points past the target list.");
  }
  for (const runId of targets) {
    const entry = ctx.registry.get(runId);
    const known = (entry !== undefined && entry.scope === ctx.scopeToken) || statOrNull(runFiles(ctx.scope, runId).dir) !== null;
    if (!known) throw unavailable(runId);
  }

  // Both channels' sizes are kept as sums, entry by entry, so a page of many large entries costs
  // each entry's serialisation once, not the whole page again for every entry added.
  const entries: RunView[] = [];
  let textBytes = 0;
  let entryJsonBytes = 0;
  for (let i = index; i < targets.length; i++) {
    const view = buildView(resolveFacts(ctx, targets[i] as string));
    const candidate = [...entries, view];
    const more = i + 1 < targets.length;
    const cursor = more ? encodeCursor({ k: "batch", s: binding.scope, t: binding.targets, i: i + 1 }) : undefined;
    const viewText = bytes(formatRunText(view)) + (entries.length > 0 ? ENTRY_SEPARATOR_BYTES : 0);
    const viewJson = bytes(JSON.stringify(view)) + (entries.length > 0 ? 1 : 0); // "," between array items
    const text = textBytes + viewText + (cursor ? bytes(moreRunsText(cursor)) : 0);
    const envelope = emptyEnvelopeBytes(candidate, cursor) + entryJsonBytes + viewJson;
    if (text > limit || envelope > limit) {
      if (entries.length === 0) {
        throw new FlowError("page_too_small", `Run ${view.runId} needs ${Math.max(text, envelope)} bytes; limitBytes is ${limit}.`);
      }
      return { mode: "batch", entries, nextCursor: encodeCursor({ k: "batch", s: binding.scope, t: binding.targets, i }) };
    }
    entries.push(view);
    textBytes += viewText;
    entryJsonBytes += viewJson;
  }
  return { mode: "batch", entries };
}

// ---------------------------------------------------------------------------------------------
// Single-run page inspection

interface ViewSource {
  doc: ViewDocument | null;
  encoding: "json" | "text";
  /** The document can still change at its end (a live run's logs or summary). */
  growing: boolean;
  outputStatus?: "available" | "empty" | "unavailable";
}

/** The final document is immutable once settled, whether it comes from memory or its file. */
function finalSource(facts: RunFacts): ViewDocument | null {
  const source = facts.final;
  if (!source) return null;
  if (source.where === "value") {
    const doc = memoryDocument(finalDocumentText(source.final.format, source.final.value));
    return { ...doc, fingerprint: `f:${doc.size}` };
  }
  const doc = finalFileDocument(source.path);
  return doc.size === source.meta.documentBytes ? { ...doc, fingerprint: `f:${doc.size}` } : doc;
}

/** A log view; `written` is what its owner says it wrote there, when known. */
function logSource(facts: RunFacts, path: string, written: number | undefined): ViewSource {
  const encoding = facts.kind === "workflow" ? "json" : "text";
  const stat = lstatOrNull(path); // a link planted there is no log: its page and its status agree
  if (!stat?.isFile()) {
    // A log is created by its first write: none yet (a live run, or a settled one whose owner
    // wrote nothing there), or lost (an interrupted run's counts may be stale). An empty page
    // either way, with the status saying which.
    const never = facts.live || (written === 0 && facts.status === "done");
    // A workflow's log is a JSON array: one never written is the empty array, still valid JSON.
    const doc = never && facts.kind === "workflow" ? logDocument(facts.kind, path) : null;
    return { doc, encoding, growing: facts.live, outputStatus: never ? "empty" : "unavailable" };
  }
  return {
    doc: logDocument(facts.kind, path),
    encoding,
    growing: facts.live,
    outputStatus: stat.size > 0 ? "available" : "empty",
  };
}

function sourceFor(ctx: InspectContext, facts: RunFacts, view: RunViewName): ViewSource {
  const files = runFiles(ctx.scope, facts.runId);
  const agentText = facts.kind === "agent" ? "text" : "json";
  switch (view) {
    case "summary":
      return { doc: memoryDocument(JSON.stringify(buildView(facts))), encoding: "json", growing: facts.live };
    case "launch": {
      // The launch details are the start line's: written with the run, never changed.
      const doc = launchDocument(files, facts.runId, facts.live);
      return { doc, encoding: "json", growing: false, outputStatus: doc ? "available" : "unavailable" };
    }
    case "output":
      return logSource(facts, files.output, facts.logBytesWritten?.output);
    case "diagnostics":
      return logSource(facts, files.diagnostics, facts.logBytesWritten?.diagnostics);
    case "final":
      // Immutable once settled; while the run is live its final is still to come, so not complete.
      return { doc: finalSource(facts), encoding: agentText, growing: facts.live };
    case "patch": {
      // Written once, before the run settles (src/isolation/): what a worktree child changed, redacted.
      // While the run is live the patch may still be written: not complete yet.
      // A workflow keeps no patch of its own; its (empty) page is json, as every workflow view is.
      const doc = lstatOrNull(files.patch)?.isFile() ? logDocument("agent", files.patch) : null;
      return { doc, encoding: agentText, growing: facts.live };
    }
    case "calls":
      // A workflow's agent() and tools.* calls, folded from its journal (calls.ts); an agent run makes none.
      return { doc: facts.kind === "workflow" ? callsDocument(files.journal, facts.runId) : null, encoding: "json", growing: facts.live };
  }
}

export function inspectSingle(
  ctx: InspectContext,
  runIdInput: unknown,
  viewInput: unknown,
  opts: { limitBytes?: number; cursor?: string } = {},
): SinglePayload {
  const runId = assertRunId(runIdInput);
  const view = assertView(viewInput);
  const limit = assertLimitBytes(opts.limitBytes, DEFAULT_PAGE_BYTES);
  const binding = { scope: ctx.scopeToken, runId, view };
  const cursor = opts.cursor === undefined ? undefined : decodePageCursor(opts.cursor, binding);
  const facts = resolveFacts(ctx, runId);
  const source = sourceFor(ctx, facts, view);
  const finalAvailable = facts.final !== null;

  const payload: SinglePayload = {
    mode: "single",
    runId,
    view,
    page: { text: "", encoding: source.encoding, complete: !source.growing },
    finalAvailable,
  };
  if (source.outputStatus && (view === "output" || view === "diagnostics" || view === "launch"))
    payload.outputStatus = source.outputStatus;
  if (!source.doc) {
    if (cursor) throw new FlowError("cursor_stale", "The evidence changed while paging. Restart without a cursor.");
    return payload;
  }
  const offset = cursor ? cursor.o : 0;
  if (cursor) assertFresh(source.doc, offset, cursor.f);
  const page = readPage(source.doc, offset, limit);
  payload.page.text = page.text;
  if (!page.atEnd) {
    payload.page.complete = false;
    payload.page.nextCursor = encodeCursor({
      k: "page",
      s: binding.scope,
      r: runId,
      w: view,
      o: page.nextOffset,
      f: source.doc.fingerprint,
    });
  } else {
    payload.page.complete = !source.growing;
  }
  return payload;
}

/**
 * The last `maxBytes` (or fewer) of one view's document, for people watching a run (`/flow runs
 * <id> tail`). It reads only those bytes, so a long log costs no more than a short one; the cut
 * moves forward to the next character boundary.
 */
export function inspectTail(ctx: InspectContext, runIdInput: unknown, viewInput: unknown, maxBytes: number): string {
  const runId = assertRunId(runIdInput);
  const source = sourceFor(ctx, resolveFacts(ctx, runId), assertView(viewInput));
  if (!source.doc) return "";
  const doc = source.doc;
  let start = Math.max(0, doc.size - maxBytes);
  const head = doc.read(start, Math.min(4, doc.size - start));
  for (let i = 0; i < head.length && ((head[i] ?? 0) & 0xc0) === 0x80; i++) start++;
  return readPage(doc, start, doc.size - start || 1).text;
}
