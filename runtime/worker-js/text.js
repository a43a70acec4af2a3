// Generated from runtime/text.ts by runtime/compile-worker.ts. Do not edit: run npm run build:worker.
// Caps for text a script controls (error names, messages, codes, stacks): whatever a script
// throws reaches receipts, records, journals and diagnostics, so none of it may be unbounded.

/** Longest error message kept; the rest is cut, and the cut is marked. */
export const MAX_ERROR_MESSAGE_CHARS = 4096;
/** Longest stack kept (frames are mapped to the author's lines first). */
export const MAX_STACK_CHARS = 16_384;
/** Longest error name or code kept. */
export const MAX_NAME_CHARS = 64;

/** `text`, or its first `max` characters followed by a marker that says how much was cut. */
export function capText(text        , max        )         {
  if (text.length <= max) return text;
  // Never split a surrogate pair: a lone half is not valid UTF-8 when written.
  let end = max;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}… [${text.length - end} more characters cut]`;
}

/**
 * An error code or name as a short identifier: letters, digits and `_.:-` only, at most
 * MAX_NAME_CHARS. Anything else a script put there becomes `_`; an empty result is undefined.
 */
export function sanitizeIdentifier(value        )                     {
  const clean = value.slice(0, MAX_NAME_CHARS).replace(/[^A-Za-z0-9_.:-]/g, "_");
  return clean === "" ? undefined : clean;
}
