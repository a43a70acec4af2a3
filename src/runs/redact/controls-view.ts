import { removalOrigin, type EscapeView } from "./escapes.ts";

/**
 * Control characters and terminal escape sequences: what ../controls.ts strips from text that may
 * reach a terminal, and what redaction reads through. A colour code between a key and its value
 * (`grep --color=always`, `jq -C`, `yq -C`) or a zero-width space inside a token hides a secret from
 * every pattern, and a terminal, the TUI or `flow runs show` that strips them would then show it
 * whole. So when a text holds any, redaction also reads it with them taken out (see controlsView).
 */

/** OSC (ESC ] or C1 0x9d) up to BEL or ST; an unterminated one runs to the end of the text. */
const OSC = String.raw`(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?`;
/** CSI (ESC [ or C1 0x9b): parameters, intermediates, one final byte. */
const CSI = String.raw`(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?`;
/** DCS, SOS, PM, APC strings up to ST. */
const STRING = String.raw`(?:\x1b[PX^_]|[\x90\x98\x9e\x9f])[^\x1b\x9c]*(?:\x1b\\|\x9c)?`;
/** Any other two-byte escape (ESC c resets the terminal, ESC 7 saves the cursor). */
const SHORT = String.raw`\x1b[ -~]?`;
export const SEQUENCES = new RegExp(`${OSC}|${STRING}|${CSI}|${SHORT}`, "g");
/**
 * Every other control character; and the invisible ones that change how text reads without being
 * seen: bidirectional overrides, embeddings and isolates (U+202A–U+202E, U+2066–U+2069, which can
 * show a name or a command reversed), direction marks and the zero-width space (U+061C, U+200B,
 * U+200E, U+200F). Joiners stay: emoji and some scripts need them.
 */
export const CONTROL = String.raw`[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b\u200e\u200f\u202a-\u202e\u2066-\u2069]`;
/** Cheap test: most text holds no control character at all. */
export const ANY_CONTROL = new RegExp(CONTROL);
/**
 * Unicode's line and paragraph separators (U+2028, U+2029): every pattern stops at them as at a
 * line break, so one inside a token or a password leaves the rest of it, while a reader (or a
 * model) joins the two halves. Redaction reads through them; stripControls keeps them.
 */
const SEPARATOR = String.raw`[\u2028\u2029]`;
const ANY_HIDING = new RegExp(`${CONTROL}|${SEPARATOR}`);
/** A whole sequence, or one control character or separator, as one removal. */
const REMOVED = new RegExp(`${OSC}|${STRING}|${CSI}|${SHORT}|${CONTROL}|${SEPARATOR}`, "g");

/**
 * `text` with its escape sequences, control characters and Unicode separators taken out (line breaks and tabs stay),
 * and where each unit came from; null when it holds none. Linear: the text is rebuilt natively,
 * and the origin map is two typed lists, one entry per removal (where it leaves the view, and how
 * much was removed up to there).
 */
export function controlsView(text: string): EscapeView | null {
  if (!ANY_HIDING.test(text)) return null;
  let viewAt = new Int32Array(64);
  let removedUpTo = new Int32Array(64);
  let count = 0;
  let removed = 0;
  const view = text.replace(REMOVED, (sequence: string, offset: number) => {
    if (count === viewAt.length) {
      viewAt = grown(viewAt);
      removedUpTo = grown(removedUpTo);
    }
    removed += sequence.length;
    viewAt[count] = offset + sequence.length - removed;
    removedUpTo[count++] = removed;
    return "";
  });
  if (count === 0) return null;
  return { text: view, origin: removalOrigin(viewAt, removedUpTo, count) };
}

function grown(list: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> {
  const bigger = new Int32Array(list.length * 2);
  bigger.set(list);
  return bigger;
}
