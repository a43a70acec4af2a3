import { printable } from "./controls.ts";

/** The most of a script's line a syntax error quotes: the part around the column. */
export const EXCERPT_MAX_CHARS = 100;

const INDENT = "    ";

/**
 * The line a syntax error is on, as two lines to print under its message: the line (cut to
 * EXCERPT_MAX_CHARS around the column) and a caret under the column. It is the author's text, so
 * it is redacted whole before it is cut (a cut token is one no rule recognises) and stripped of
 * escape sequences, like every quoted input. Tabs count one column for the parser: shown as one space.
 */
export function sourceExcerpt(lineText: string, column: number): string {
  const line = lineText.replace(/\t/g, " ");
  const shown = printable(line);
  const before = line.slice(0, Math.max(0, column - 1));
  // Redaction may change lengths before the column: the caret follows the redacted prefix, if it is one.
  const shownBefore = shown === line ? before : printable(before);
  const at = shown.startsWith(shownBefore) ? shownBefore.length : undefined;
  const start = at === undefined ? 0 : Math.max(0, Math.min(at - EXCERPT_MAX_CHARS / 2, shown.length - EXCERPT_MAX_CHARS));
  const end = Math.min(shown.length, start + EXCERPT_MAX_CHARS);
  const head = start > 0 ? "…" : "";
  const cut = `${head}${shown.slice(start, end)}${end < shown.length ? "…" : ""}`;
  if (at === undefined) return `${INDENT}${cut}`;
  return `${INDENT}${cut}\n${INDENT}${" ".repeat(head.length + at - start)}^`;
}
