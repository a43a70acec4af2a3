import { INLINE_LIMIT_BYTES, jsonBytes } from "../read/delivery.ts";
import { finalDocumentText, finalFormatFor } from "../journal/evidence.ts";
import type { RunKind } from "../ids.ts";
import type { FinalMeta } from "../journal/journal.ts";
import { redactValue } from "../redact/index.ts";
import type { MemoryFinal } from "../registry.ts";

export interface SettledFinal {
  /** The value, redacted: what was saved. */
  value: unknown;
  /** What the terminal line and the record say about the final value. */
  meta: FinalMeta;
  /** The value for the terminal line, when it goes there instead of a final file. */
  journalValue?: unknown;
  /** What memory keeps: an unsaved value, or one small enough to go inline; else undefined. */
  memory: MemoryFinal | undefined;
}

/**
 * A succeeded run's final value, redacted. A value small enough to be delivered inline goes into
 * the terminal line, written whole in one append with the outcome: most children answer in a few
 * kilobytes, and a file per answer is most of what settling a run costs. A larger value is offered
 * to `save` as its view document (the final file, paged by reference). Memory keeps only what the
 * disk cannot serve well: the value when it was not saved, or when it goes inline.
 */
export function settleFinal(kind: RunKind, raw: unknown, structured: boolean, save: (document: string) => boolean): SettledFinal | undefined {
  const { value, changed } = redactValue(raw);
  if (value === undefined) return undefined;
  const format = finalFormatFor(kind, value, structured);
  const document = finalDocumentText(format, value);
  const valueJsonBytes = jsonBytes(value) ?? 0;
  const inline = valueJsonBytes <= INLINE_LIMIT_BYTES;
  const saved = inline || save(document);
  const meta: FinalMeta = { format, valueJsonBytes, documentBytes: Buffer.byteLength(document, "utf8"), redacted: changed, saved };
  if (inline) meta.inJournal = true;
  const memory = !saved || inline ? { value, format, redacted: changed, saved } : undefined;
  return inline ? { value, meta, journalValue: value, memory } : { value, meta, memory };
}
