import { stripControls } from "../runs/index.ts";

const ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/**
 * Text for an HTML element or a quoted attribute. Everything a run wrote (descriptions, answers,
 * errors) passes through here: a run's text never becomes markup or script. Control characters
 * other than newline and tab are dropped as everywhere pi-flow prints a run's text (stripControls):
 * a terminal escape shows as nothing, not as noise, and none reaches a terminal the page is printed
 * to (the C1 forms included); a bidirectional override cannot show a description reversed.
 */
export function html(value: unknown): string {
  return stripControls(textOf(value)).replace(/[&<>"']/g, (char) => ENTITIES[char]!);
}

/**
 * A record's field as text. A record is a file anyone may have written: a field the report shows
 * as text may be an object there, whose `String()` throws (`{"toString": 1}`) and fails the report
 * of every run beside it. An object is shown as its JSON, never as markup; nothing is shown for none.
 */
export function textOf(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === undefined || value === null) return "";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

/**
 * How many bytes `html(text)` takes, without building it: the report's total counts what the page
 * holds, and escaped, a text of quotes is six times its size (`"` is `&quot;`).
 */
export function escapedBytes(text: string): number {
  let grown = 0;
  for (const [char] of text.matchAll(/[&<>"']/g)) grown += ENTITIES[char]!.length - 1;
  return Buffer.byteLength(text) + grown;
}

/** The longest start of `text` whose escaped size (escapedBytes) is at most `bytes`. */
export function escapedPrefix(text: string, bytes: number): string {
  let size = 0;
  let end = 0;
  for (const char of text) {
    size += ENTITIES[char]?.length ?? Buffer.byteLength(char);
    if (size > bytes) break;
    end += char.length;
  }
  return text.slice(0, end);
}

/** An element ID for a run: run IDs are lowercase alphanumerics and underscores already. */
export const anchor = (runId: string): string => `run-${runId.replace(/[^a-z0-9_]/g, "")}`;
