import { INLINE_LIMIT_BYTES, jsonBytes } from "./delivery.ts";
import { finalDocumentText, finalFormatFor } from "./evidence.ts";
import type { RunKind } from "./ids.ts";
import type { FinalMeta } from "./journal.ts";
import { redactValue } from "./redact.ts";
import type { MemoryFinal } from "./registry.ts";

export interface SettledFinal {
  /** What the terminal line and the record say about the final value. */
  meta: FinalMeta;
  /** What memory keeps: an unsaved value, or one small enough to go inline; else undefined. */
  memory: MemoryFinal | undefined;
}

/**
 * A succeeded run's final value, redacted, offered to `save` as its view document. Memory keeps
 * only what the file cannot serve well: the value when it was not saved, or when it goes inline.
 */
export function settleFinal(kind: RunKind, raw: unknown, structured: boolean, save: (document: string) => boolean): SettledFinal | undefined {
  const { value, changed } = redactValue(raw);
  if (value === undefined) return undefined;
  const format = finalFormatFor(kind, value, structured);
  const document = finalDocumentText(format, value);
  const saved = save(document);
  const meta: FinalMeta = {
    format,
    valueJsonBytes: jsonBytes(value) ?? 0,
    documentBytes: Buffer.byteLength(document, "utf8"),
    redacted: changed,
    saved,
  };
  const inline = meta.valueJsonBytes <= INLINE_LIMIT_BYTES;
  return { meta, memory: !saved || inline ? { value, format, redacted: changed, saved } : undefined };
}
