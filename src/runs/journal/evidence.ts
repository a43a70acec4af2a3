import { readEvidenceText } from "../fsio.ts";
import type { RunKind } from "../ids.ts";
import type { FinalFormat } from "./journal.ts";
import { fileDocument, type ViewDocument } from "../read/paging.ts";

/**
 * How evidence is laid out in its files, chosen so each file *is* its view document (or is one with
 * a constant prefix and suffix): a page is then a byte range of one file and never costs more than
 * the page.
 *
 * - Agent output and diagnostics are text. Each message after the first carries a leading "\n"
 *   separator, so pages concatenate losslessly.
 * - Workflow output and diagnostics are JSON (every workflow view is). The file holds the body of a
 *   JSON array, each element written as `,\n<json>` (the first without the comma); the view is
 *   `[` + file + `\n]`.
 * - The final file holds the final view document of a value too large to go inline: agent text,
 *   agent JSON text, or `{"result":…}`. A smaller value is in the terminal line (final-value.ts).
 */
export type DiagnosticLevel = "debug" | "info" | "warn" | "error";

export interface DiagnosticEntry {
  level: DiagnosticLevel;
  message: string;
  code?: string;
  at?: string;
}

const ARRAY_PREFIX = "[";
const ARRAY_SUFFIX = "\n]";

/** The bytes to append for one output message. `first`: the log is still empty. */
export function outputChunk(kind: RunKind, text: string, at: string, first: boolean): string {
  if (kind === "agent") return first ? text : `\n${text}`;
  return `${first ? "" : ","}\n${JSON.stringify({ at, text })}`;
}

export function diagnosticChunk(kind: RunKind, entry: DiagnosticEntry & { at: string }, first: boolean): string {
  if (kind === "agent") {
    const code = entry.code ? ` [${entry.code}]` : "";
    // A message's own lines are indented, so no text a child wrote (a command, its stderr) can pass
    // for an entry of its own: readers (resume's CLI session) read entries by their line's start,
    // and a regular expression's line starts also follow CR, U+2028 and U+2029.
    const line = `${entry.at} ${entry.level}${code}: ${entry.message.replace(/\r\n|[\n\r\u2028\u2029]/g, "\n  ")}`;
    return first ? line : `\n${line}`;
  }
  const json: DiagnosticEntry = { at: entry.at, level: entry.level, message: entry.message };
  if (entry.code) json.code = entry.code;
  return `${first ? "" : ","}\n${JSON.stringify(json)}`;
}

export function logDocument(kind: RunKind, path: string): ViewDocument {
  return kind === "agent"
    ? fileDocument(path, { appendOnly: true })
    : fileDocument(path, { appendOnly: true, prefix: ARRAY_PREFIX, suffix: ARRAY_SUFFIX });
}

export function finalFormatFor(kind: RunKind, value: unknown, structured: boolean): FinalFormat {
  if (kind === "workflow") return "result-json";
  return typeof value === "string" && !structured ? "text" : "json-text";
}

/** The final view document of a (redacted, JSON-safe) value. */
export function finalDocumentText(format: FinalFormat, value: unknown): string {
  if (format === "text") return String(value);
  if (format === "json-text") return JSON.stringify(value);
  return JSON.stringify({ result: value });
}

export function parseFinalDocument(format: FinalFormat, text: string): unknown {
  if (format === "text") return text;
  if (format === "json-text") return JSON.parse(text) as unknown;
  const doc = JSON.parse(text) as { result?: unknown };
  return doc.result;
}

/** Read a small final back for inline delivery; undefined when it cannot be read. */
export function readFinalValue(path: string, format: FinalFormat): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: parseFinalDocument(format, readEvidenceText(path)) };
  } catch {
    return { ok: false };
  }
}

export function finalFileDocument(path: string): ViewDocument {
  return fileDocument(path, { appendOnly: false });
}
