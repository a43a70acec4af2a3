import { createHash } from "node:crypto";
import { FlowError } from "../../contract/errors.ts";
import { isRunId } from "../ids.ts";

/**
 * Opaque continuation tokens. A cursor is base64url of a checksum and a small JSON body; it binds
 * the scope (project + session), and the run and view, or the target set, or the list stream it
 * continues. A cursor that fails any binding is `cursor_invalid`; one whose format version is not
 * the current one is `cursor_stale` (restart without a cursor). The checksum only catches damage and
 * casual edits; bounds are re-checked against the evidence on every use.
 */
export const CURSOR_VERSION = 1;
const MAX_CURSOR_CHARS = 4096;
const SUM_BYTES = 8;

export interface PageCursor {
  k: "page";
  s: string;
  r: string;
  w: string;
  /** Byte offset in the view document where the next page starts. */
  o: number;
  /** Evidence fingerprint when the cursor was issued. */
  f: string;
}

export interface BatchCursor {
  k: "batch";
  s: string;
  /** Hash of the ordered target list. */
  t: string;
  /** Index of the next target to serve. */
  i: number;
}

export interface ListCursor {
  k: "list";
  s: string;
  n: "agent" | "workflow";
  /** live: serving registry runs with no record; saved: serving records, newest first. */
  st: "live" | "saved";
  /** The last run served in that stage. */
  a: string;
}

export type Cursor = PageCursor | BatchCursor | ListCursor;

function checksum(body: Buffer): Buffer {
  return createHash("sha256").update(body).digest().subarray(0, SUM_BYTES);
}

export function encodeCursor(cursor: Cursor): string {
  const body = Buffer.from(JSON.stringify({ v: CURSOR_VERSION, ...cursor }), "utf8");
  return Buffer.concat([checksum(body), body]).toString("base64url");
}

export function targetsHash(runIds: readonly string[]): string {
  return createHash("sha256").update(runIds.join("\n")).digest("base64url").slice(0, 16);
}

const invalid = (why: string): FlowError => new FlowError("cursor_invalid", `Invalid cursor: ${why}.`);

function decodeRaw(token: unknown): Record<string, unknown> {
  if (typeof token !== "string" || token.length === 0 || token.length > MAX_CURSOR_CHARS || !/^[A-Za-z0-9_-]+$/.test(token)) {
    throw invalid("not a Flow cursor");
  }
  const raw = Buffer.from(token, "base64url");
  // Node's decoder skips stray trailing characters; only the canonical spelling is accepted.
  if (raw.length <= SUM_BYTES || raw.toString("base64url") !== token) throw invalid("not a Flow cursor");
  const body = raw.subarray(SUM_BYTES);
  if (!checksum(body).equals(raw.subarray(0, SUM_BYTES))) throw invalid("damaged or edited");
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString("utf8"));
  } catch {
    throw invalid("not a Flow cursor");
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) throw invalid("not a Flow cursor");
  const record = parsed as Record<string, unknown>;
  if (record.v !== CURSOR_VERSION) {
    throw new FlowError("cursor_stale", "The cursor predates the current page format. Restart without a cursor.");
  }
  return record;
}

const isString = (value: unknown): value is string => typeof value === "string" && value.length > 0;
const isIndex = (value: unknown): value is number => typeof value === "number" && Number.isSafeInteger(value) && value >= 0;

export function decodePageCursor(token: unknown, bind: { scope: string; runId: string; view: string }): PageCursor {
  const c = decodeRaw(token);
  if (c.k !== "page" || !isString(c.s) || !isRunId(c.r) || !isString(c.w) || !isIndex(c.o) || typeof c.f !== "string") {
    throw invalid("not a page cursor");
  }
  if (c.s !== bind.scope) throw invalid("issued in another session or project");
  if (c.r !== bind.runId) throw invalid("issued for another run");
  if (c.w !== bind.view) throw invalid(`issued for the ${c.w} view, not ${bind.view}`);
  return { k: "page", s: c.s, r: c.r, w: c.w, o: c.o, f: c.f };
}

export function decodeBatchCursor(token: unknown, bind: { scope: string; targets: string }): BatchCursor {
  const c = decodeRaw(token);
  if (c.k !== "batch" || !isString(c.s) || !isString(c.t) || !isIndex(c.i)) throw invalid("not a batch inspection cursor");
  if (c.s !== bind.scope) throw invalid("issued in another session or project");
  if (c.t !== bind.targets) throw invalid("issued for another target set");
  return { k: "batch", s: c.s, t: c.t, i: c.i };
}

export function decodeListCursor(token: unknown, bind: { scope: string; stream: "agent" | "workflow" }): ListCursor {
  const c = decodeRaw(token);
  if (
    c.k !== "list" ||
    !isString(c.s) ||
    (c.n !== "agent" && c.n !== "workflow") ||
    (c.st !== "live" && c.st !== "saved") ||
    !isRunId(c.a)
  ) {
    throw invalid("not a list cursor");
  }
  if (c.s !== bind.scope) throw invalid("issued in another session or project");
  if (c.n !== bind.stream) {
    throw invalid(
      bind.stream === "agent"
        ? "a workflows-stream cursor was passed as cursor"
        : "a runs-stream cursor was passed as workflowCursor",
    );
  }
  return { k: "list", s: c.s, n: c.n, st: c.st, a: c.a };
}
