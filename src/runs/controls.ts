/**
 * Text that may reach a terminal, made inert. A child's stderr, a cassette's error or a model's
 * tool name can carry escape sequences: OSC 52 writes the clipboard, OSC 0 sets the title, CSI
 * clears the screen or moves the cursor. Whole sequences go (their payload too, so no `]52;c;…`
 * is left to read), then every other control character; line breaks and tabs stay.
 */
import { redactText } from "./redact/index.ts";

/** OSC (ESC ] or C1 0x9d) up to BEL or ST; an unterminated one runs to the end of the text. */
const OSC = String.raw`(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?`;
/** CSI (ESC [ or C1 0x9b): parameters, intermediates, one final byte. */
const CSI = String.raw`(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?`;
/** DCS, SOS, PM, APC strings up to ST. */
const STRING = String.raw`(?:\x1b[PX^_]|[\x90\x98\x9e\x9f])[^\x1b\x9c]*(?:\x1b\\|\x9c)?`;
/** Any other two-byte escape (ESC c resets the terminal, ESC 7 saves the cursor). */
const SHORT = String.raw`\x1b[ -~]?`;
const SEQUENCES = new RegExp(`${OSC}|${STRING}|${CSI}|${SHORT}`, "g");
/**
 * Every other control character; and the invisible ones that change how text reads without being
 * seen: bidirectional overrides, embeddings and isolates (U+202A–U+202E, U+2066–U+2069, which can
 * show a name or a command reversed), direction marks and the zero-width space (U+061C, U+200B,
 * U+200E, U+200F). Joiners stay: emoji and some scripts need them.
 */
const CONTROL = String.raw`[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b\u200e\u200f\u202a-\u202e\u2066-\u2069]`;
const CONTROLS = new RegExp(CONTROL, "g");
/** Cheap test: most text holds no control character at all. */
const ANY_CONTROL = new RegExp(CONTROL);

export function stripControls(text: string): string {
  if (!ANY_CONTROL.test(text)) return text;
  return text.replace(SEQUENCES, "").replace(CONTROLS, "");
}

/** What pi-flow prints of text it did not write: secrets redacted, controls stripped. */
export function printable(text: string): string {
  return stripControls(redactText(text).text);
}
