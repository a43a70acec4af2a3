/**
 * Text that may reach a terminal, made inert. A child's stderr, a cassette's error or a model's
 * tool name can carry escape sequences: OSC 52 writes the clipboard, OSC 0 sets the title, CSI
 * clears the screen or moves the cursor. Whole sequences go (their payload too, so no `]52;c;…`
 * is left to read), then every other control character and invisible format character (see
 * CONTROL); line breaks, tabs and what emoji and scripts need (joiners, variation selectors) stay.
 */
import { ANY_CONTROL, CONTROL, SEQUENCES } from "./redact/controls-view.ts";
import { redactText } from "./redact/index.ts";

/**
 * Tag characters (U+E0020-E007F) spell hidden ASCII (text a model reads and a person cannot see);
 * the only ones kept are a flag's (🏴 then tags then the cancel tag U+E007F: 🏴󠁧󠁢󠁳󠁣󠁴󠁿).
 * Hangul fillers (U+115F, U+1160, U+3164, U+FFA0) show as blank space: shown as a space, so
 * stripping one never joins two words into another.
 */
const FLAG_TAGS = String.raw`\u{1f3f4}[\u{e0020}-\u{e007e}]+\u{e007f}`;
const TAG = String.raw`[\u{e0020}-\u{e007f}]`;
const FILLER = String.raw`[\u115f\u1160\u3164\uffa0]`;
const HIDDEN = new RegExp(`(${FLAG_TAGS})|${CONTROL}|${TAG}|(${FILLER})`, "gv");
const ANY_HIDDEN = new RegExp(`${CONTROL}|${TAG}|${FILLER}`, "v");

export function stripControls(text: string): string {
  if (!ANY_HIDDEN.test(text)) return text;
  const bare = ANY_CONTROL.test(text) ? text.replace(SEQUENCES, "") : text;
  return bare.replace(HIDDEN, (_unit: string, flag?: string, filler?: string) => flag ?? (filler ? " " : ""));
}

/** What pi-flow prints of text it did not write: secrets redacted, controls stripped. */
export function printable(text: string): string {
  return stripControls(redactText(text).text);
}

/** The most of a caller's value an error message quotes back. */
export const QUOTE_MAX_CHARS = 64;

/**
 * A value the caller gave (a name, an ID), quoted back in an error message: redacted whole first,
 * since a cut could leave part of a secret no pattern knows, then cut to QUOTE_MAX_CHARS characters,
 * so a 200,000-character name costs the model one line of its context, not all of it.
 */
export function quoteGiven(value: string): string {
  const characters = Array.from(printable(value));
  if (characters.length <= QUOTE_MAX_CHARS) return JSON.stringify(characters.join(""));
  return `${JSON.stringify(`${characters.slice(0, QUOTE_MAX_CHARS).join("")}…`)} (${value.length} characters)`;
}
