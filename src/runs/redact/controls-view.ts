import type { EscapeView } from "./escapes.ts";

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
/** A whole sequence, or one control character, as one removal. */
const REMOVED = new RegExp(`${OSC}|${STRING}|${CSI}|${SHORT}|${CONTROL}`, "g");

/**
 * `text` with its escape sequences and control characters taken out (line breaks and tabs stay),
 * and where each unit came from; null when it holds none. Linear: one pass, and the origin map is
 * a list of segments, one per removal.
 */
export function controlsView(text: string): EscapeView | null {
  if (!ANY_CONTROL.test(text)) return null;
  const parts: string[] = [];
  const viewStarts: number[] = [0];
  const sourceStarts: number[] = [0];
  let length = 0;
  let from = 0;
  REMOVED.lastIndex = 0;
  for (let match = REMOVED.exec(text); match !== null; match = REMOVED.exec(text)) {
    if (match[0].length === 0) {
      REMOVED.lastIndex++;
      continue;
    }
    parts.push(text.slice(from, match.index));
    length += match.index - from;
    from = match.index + match[0].length;
    viewStarts.push(length);
    sourceStarts.push(from);
  }
  if (from === 0) return null;
  parts.push(text.slice(from));
  const origin = (index: number): number => {
    let low = 0;
    let high = viewStarts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (viewStarts[mid]! <= index) low = mid;
      else high = mid - 1;
    }
    return sourceStarts[low]! + (index - viewStarts[low]!);
  };
  return { text: parts.join(""), origin };
}
