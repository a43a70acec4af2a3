import { redactValue } from "../redact/index.ts";

/** The contract's inline bound: 16 KiB of UTF-8 JSON, measured after redaction. */
export const INLINE_LIMIT_BYTES = 16 * 1024;

export type Delivery =
  | { delivery: "inline"; value: unknown; bytes: number; redacted: boolean }
  | { delivery: "reference"; bytes: number; redacted: boolean }
  | { delivery: "none"; redacted: false };

/** UTF-8 bytes of a value's JSON encoding; undefined has none (it is not a result). */
export function jsonBytes(value: unknown): number | undefined {
  const json = JSON.stringify(value);
  return json === undefined ? undefined : Buffer.byteLength(json, "utf8");
}

/**
 * Decide how a canonical result travels. The value is redacted first and then measured, so the
 * bound holds for what is actually shown. Never truncates: too big means by reference. `false`,
 * `null`, `0` and `""` are results like any other; only `undefined` means there is none.
 */
export function deliver(value: unknown, limitBytes: number = INLINE_LIMIT_BYTES): Delivery {
  if (value === undefined) return { delivery: "none", redacted: false };
  const { value: clean, changed } = redactValue(value);
  const bytes = jsonBytes(clean);
  if (bytes === undefined) return { delivery: "none", redacted: false };
  return bytes <= limitBytes
    ? { delivery: "inline", value: clean, bytes, redacted: changed }
    : { delivery: "reference", bytes, redacted: changed };
}
