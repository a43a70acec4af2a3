/**
 * Text that may reach a terminal, made inert. A child's stderr, a cassette's error or a model's
 * tool name can carry escape sequences: OSC 52 writes the clipboard, OSC 0 sets the title, CSI
 * clears the screen or moves the cursor. Whole sequences go (their payload too, so no `]52;c;…`
 * is left to read), then every other control character; line breaks and tabs stay.
 */
import { ANY_CONTROL, CONTROL, SEQUENCES } from "./redact/controls-view.ts";
import { redactText } from "./redact/index.ts";

const CONTROLS = new RegExp(CONTROL, "g");

export function stripControls(text: string): string {
  if (!ANY_CONTROL.test(text)) return text;
  return text.replace(SEQUENCES, "").replace(CONTROLS, "");
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
