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
const CSI = String.raw`(?:\x1b\[|\x9b)[0-?]*[ -\/]*[@-~]?`;
/** DCS, SOS, PM, APC strings up to ST. */
const STRING = String.raw`(?:\x1b[PX^_]|[\x90\x98\x9e\x9f])[^\x1b\x9c]*(?:\x1b\\|\x9c)?`;
/** Any other two-byte escape (ESC c resets the terminal, ESC 7 saves the cursor). */
const SHORT = String.raw`\x1b[ -~]?`;
export const SEQUENCES = new RegExp(`${OSC}|${STRING}|${CSI}|${SHORT}`, "g");
/**
 * What a terminal, the TUI or the HTML report shows nothing of (../controls.ts strips it): every
 * other control character, and every invisible format character, by Unicode property rather than
 * by list: `\p{Cf}` (bidirectional overrides and isolates, direction marks, the zero-width space,
 * the word joiner and invisible operators U+2060-2064, the BOM, the soft hyphen, U+180E,
 * U+206A-206F, interlinear annotations U+FFF9-FFFB) and `\p{Default_Ignorable_Code_Point}` (the
 * combining grapheme joiner U+034F, unassigned tags). Kept, because emoji and scripts need them:
 * the joiners U+200C/U+200D, variation selectors (❤️, CJK variants), Mongolian's free variation
 * selectors, and the prepended marks that show as an Arabic or Kaithi number sign. Tag characters
 * (U+E0020-E007F) and Hangul fillers are handled by ../controls.ts (see FLAG_TAGS, FILLER).
 */
export const CONTROL = String.raw`[[\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}]--[\t\n\u200c\u200d\p{Variation_Selector}\u180b-\u180d\u180f\u0600-\u0605\u06dd\u070f\u0890\u0891\u08e2\u{110bd}\u{110cd}\u{e0020}-\u{e007f}\u115f\u1160\u3164\uffa0]]`;
/** Cheap test: most text holds no control character at all. */
export const ANY_CONTROL = new RegExp(CONTROL, "v");
/**
 * What redaction reads through: every control, format and default-ignorable character (the ones
 * display keeps for emoji and scripts too), and Unicode's line and paragraph separators (U+2028,
 * U+2029). A token split by any of them (`ghp_abc\u2060def…`, a variation selector or a tag
 * character inside it) looks whole on screen or to a model, while every pattern stops at it. What
 * a separator or a Hangul filler joins is cut again where it reads as a new line or word (see GAP).
 */
const HIDING = String.raw`[[\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}\u2028\u2029]--[\t\n]]`;
/** What display keeps (for emoji and scripts) that can still sit inside a token. */
const KEPT = String.raw`[[\p{Cf}\p{Default_Ignorable_Code_Point}]--${CONTROL}]`;
/**
 * When a text is read a second time with them out: it holds a character display strips or a
 * separator, or one display keeps next to an ASCII character (inside a token or a name). Emoji
 * sequences (👨‍👩‍👧, ❤️, a flag's tags) in prose touch no ASCII, so they cost no second reading.
 */
const ANY_HIDING = new RegExp(String.raw`${CONTROL}|[\u2028\u2029]|${KEPT}(?<=[!-~]${KEPT})|${KEPT}(?=[!-~])`, "v");
/** A whole sequence, or one hiding character, as one removal. */
const REMOVED = new RegExp(`${OSC}|${STRING}|${CSI}|${SHORT}|${HIDING}`, "gv");

/**
 * `text` with its escape sequences and hiding characters (HIDING) taken out (line breaks and tabs stay),
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

/**
 * Characters that read as a break between lines or words (NEL, U+2028, U+2029, Hangul fillers,
 * which show as blank space). Reading through one joins a token split by it, but a text that uses
 * it as the break it is would have its next line or word taken with a secret ending before it.
 */
const GAP = /[\u0085\u2028\u2029\u115f\u1160\u3164\uffa0]/g;
const ANY_GAP = /[\u0085\u2028\u2029\u115f\u1160\u3164\uffa0]/;
const WHITESPACE = /\s/;
/** A word of letters, perhaps ending in punctuation (`Next:`): no piece of a random token. */
const WORD = new RegExp(String.raw`^(?:\p{L}|${HIDING})+\p{P}*$`, "v");

/** NEL (U+0085, "next line"): a line break that no pattern stops at, as they do at U+2028 (`\s`). */
const NEL = /\u0085/g;

/**
 * `text` with each gap written as the break it is: the separators and NEL as a line break, a
 * Hangul filler (blank on screen) as a space; null when it has none. The rules take neither a
 * filler nor NEL for a break, so a value before a NEL would run on into the next line, and a
 * password phrase before one, not ending its line, would be read as its first word alone. One
 * unit for one: indexes are the text's.
 */
export function linesView(text: string): { text: string; nel: boolean } | null {
  if (!ANY_GAP.test(text)) return null;
  NEL.lastIndex = 0;
  return { text: text.replace(GAP, (gap) => (gap === "\u2028" || gap === "\u2029" || gap === "\u0085" ? "\n" : " ")), nel: NEL.test(text) };
}

/**
 * `text` with every gap written as a space, as a terminal may show a separator or NEL (blank, or
 * nothing): `--password<U+2028>hunter2` reads as a flag and its value. What a reading of it runs
 * on past a gap into whitespace is the next line, and is cut again (cutAtGaps). One unit for one.
 */
export function blankView(text: string): string {
  return text.replace(GAP, " ");
}

/**
 * Where the gaps of `text` are, as [start, end) pairs in the source's indexes through `origin` (a
 * view's map; the text's own indexes when null): a gap written escaped in JSON (`\u2028`, six
 * characters) is one gap of six units.
 */
export function gapsOf(text: string, origin: ((index: number) => number) | null): number[] {
  const gaps: number[] = [];
  GAP.lastIndex = 0;
  for (let gap = GAP.exec(text); gap !== null; gap = GAP.exec(text)) {
    gaps.push(origin ? origin(gap.index) : gap.index, origin ? origin(gap.index + 1) : gap.index + 1);
  }
  return gaps;
}

/**
 * The spans found in a reading with the gaps taken out (`viewSpans`, in the source's indices),
 * each cut at the first gap (`gaps`, from gapsOf) after which it runs on into what reads as a new
 * line or word: past whitespace (`password=hunter2\u2028next line`), or a lone word right after a
 * secret a reading with the gaps kept (`textSpans`) already ended at the gap (`ghp_…\u2028Next:`).
 * A part with no such reading is a piece of a split secret and goes with it.
 */
export function cutAtGaps(source: string, gaps: readonly number[], viewSpans: number[], textSpans: readonly number[]): void {
  if (gaps.length === 0) return;
  const textEnds = new Set<number>();
  for (let i = 1; i < textSpans.length; i += 2) textEnds.add(textSpans[i]!);
  for (let i = 0; i < viewSpans.length; i += 2) {
    const start = viewSpans[i]!;
    const end = viewSpans[i + 1]!;
    for (let g = firstAfter(gaps, start); g < gaps.length && gaps[g]! < end; g += 2) {
      const gap = gaps[g]!;
      const part = source.slice(gaps[g + 1]!, Math.min(end, gaps[g + 2] ?? end));
      if (WHITESPACE.test(part) || (textEnds.has(gap) && WORD.test(part))) {
        viewSpans[i + 1] = gap;
        break;
      }
    }
  }
}

/** The index in `gaps` ([start, end) pairs sorted by start) of the first pair starting after `value`. */
function firstAfter(gaps: readonly number[], value: number): number {
  let low = 0;
  let high = gaps.length / 2;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (gaps[2 * mid]! <= value) low = mid + 1;
    else high = mid;
  }
  return 2 * low;
}
