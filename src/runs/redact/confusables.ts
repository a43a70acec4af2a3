import { removalOrigin, type EscapeView } from "./escapes.ts";

/**
 * Look-alike letters in a key name: `pаssword` with a Cyrillic `а`, `ｐａｓｓｗｏｒｄ` in fullwidth,
 * `pass\u200dword` with a zero-width joiner. Read by a person or a model they are `password`, and a
 * secret under them is as much a secret; every rule is written for ASCII names, so they hide it. The
 * secret-name judgement reads names folded (`foldedName`), and a text that mixes such letters with
 * Latin ones is also read folded (`foldedView`), as control characters are (controls-view.ts).
 */

/** Cyrillic, Greek and other letters that look like a Latin one, and that Latin letter. */
const LOOK_ALIKES: Readonly<Record<string, string>> = {
  // Cyrillic
  а: "a", е: "e", о: "o", р: "p", с: "c", у: "y", х: "x", ѕ: "s", і: "i", ј: "j", ԁ: "d", ԛ: "q", ԝ: "w", һ: "h", ӏ: "l", ү: "y",
  А: "A", В: "B", Е: "E", К: "K", М: "M", Н: "H", О: "O", Р: "P", С: "C", Т: "T", Х: "X", У: "Y", Ѕ: "S", І: "I", Ј: "J", Ԛ: "Q", Ԝ: "W", Ү: "Y",
  // Greek
  α: "a", ε: "e", ι: "i", κ: "k", ν: "v", ο: "o", ρ: "p", τ: "t", υ: "u", χ: "x",
  Α: "A", Β: "B", Ε: "E", Ζ: "Z", Η: "H", Ι: "I", Κ: "K", Μ: "M", Ν: "N", Ο: "O", Ρ: "P", Τ: "T", Υ: "Y", Χ: "X",
  // Latin letters outside ASCII that NFKC leaves alone
  ı: "i", ɡ: "g", ɑ: "a", ȷ: "j",
};
const LOOK_ALIKE = `[${Object.keys(LOOK_ALIKES).join("")}]`;

/** Invisible characters a name can hold without showing it: joiners, the soft hyphen, the word joiner, the BOM. */
const INVISIBLE = String.raw`[\u00ad\u034f\u180e\u200b-\u200d\u2060-\u2064\ufeff]`;
/** Fullwidth ASCII (`ｐａｓｓ`), and mathematical letters (`𝐩𝐚𝐬𝐬`, a surrogate pair each): NFKC folds both. */
const WIDE = String.raw`[\uff01-\uff5e]|\ud835[\udc00-\udfff]`;

/**
 * When a text is read folded: it has an invisible character next to a Latin letter, a fullwidth or
 * mathematical letter, fullwidth punctuation between two Latin letters or digits (`ghp＿…`, a
 * token's head), or a look-alike letter next to a Latin letter or before an operator (a name
 * that mixes scripts). Prose in Cyrillic or Greek alone, CJK text with its fullwidth punctuation and
 * emoji joined by ZWJ open it rarely, so such text is not read twice.
 */
// Every branch starts at the non-ASCII unit and looks around it: a scan that stops only at such
// units is several times faster than one that tries every Latin letter.
const FOLD_GATE = new RegExp(
  `${INVISIBLE}(?:(?<=[A-Za-z].)|(?=[A-Za-z]))|[\uff21-\uff3a\uff41-\uff5a]|[\uff01-\uff20\uff3b-\uff40\uff5b-\uff5e](?<=[A-Za-z0-9].)(?=[A-Za-z0-9])|\ud835[\udc00-\udfff]|${LOOK_ALIKE}(?:(?<=[A-Za-z].)|(?=[A-Za-z:=]))`,
  "g",
);
const FOLDED_UNIT = new RegExp(`${INVISIBLE}|${WIDE}|${LOOK_ALIKE}`, "g");
const ASCII = /^[\x00-\x7f]*$/;

/** The ASCII a folded unit reads as ("" for an invisible one); the unit itself when it has none of one character. */
function foldUnit(unit: string): string {
  const alike = LOOK_ALIKES[unit];
  if (alike !== undefined) return alike;
  if (unit.length === 1 && /[\u00ad\u034f\u180e\u200b-\u200d\u2060-\u2064\ufeff]/.test(unit)) return "";
  const normal = unit.normalize("NFKC");
  return normal.length === 1 && ASCII.test(normal) ? normal : unit;
}

/** A key name as it reads: NFKC, look-alikes as Latin, invisible characters taken out. ASCII names are returned as they are. */
export function foldedName(name: string): string {
  if (ASCII.test(name)) return name;
  return name.normalize("NFKC").replace(FOLDED_UNIT, foldUnit);
}

/** How far around a gate's hit a window reaches, before it is widened to whole lines, and how far it may be widened. */
const WINDOW_REACH = 256;
const WINDOW_MAX_REACH = 4096;

/**
 * The parts of `text` that need reading folded, each folded (see foldedName) with where each of its
 * units came from in `text`; empty when the gate finds nothing to fold. A part is the lines within
 * 256 characters of a look-alike, fullwidth or invisible character (at most 4096 each way), parts
 * that touch merged: a secret under a look-alike name sits on its line or the next few (a YAML
 * block), so a long text with one such letter is read folded near it, not a second time whole.
 */
export function foldedViews(text: string): EscapeView[] {
  // The cheap test first: most text is ASCII (its UTF-8 is as long as it is), with nothing to fold.
  if (Buffer.byteLength(text, "utf8") === text.length) return [];
  const views: EscapeView[] = [];
  let windowStart = -1;
  let windowEnd = -1;
  const flush = (): void => {
    if (windowStart === -1) return;
    const view = foldedView(text.slice(windowStart, windowEnd));
    const offset = windowStart;
    if (view) views.push({ text: view.text, origin: (index) => offset + view.origin(index) });
  };
  FOLD_GATE.lastIndex = 0;
  let hit: RegExpExecArray | null;
  while ((hit = FOLD_GATE.exec(text)) !== null) {
    const hitEnd = hit.index + hit[0].length;
    const start = lineStartBefore(text, Math.max(0, hit.index - WINDOW_REACH), Math.max(0, hit.index - WINDOW_MAX_REACH));
    const end = lineEndAfter(text, Math.min(text.length, hitEnd + WINDOW_REACH), Math.min(text.length, hitEnd + WINDOW_MAX_REACH));
    if (windowStart !== -1 && start <= windowEnd) windowEnd = Math.max(windowEnd, end);
    else {
      flush();
      windowStart = start;
      windowEnd = end;
    }
    // Hits inside this window add nothing: resume after it (keeps the scan linear).
    FOLD_GATE.lastIndex = Math.max(hitEnd, windowEnd - WINDOW_REACH);
  }
  flush();
  return views;
}

/** The start of the line holding `index`, or `floor` when the line starts before it. */
function lineStartBefore(text: string, index: number, floor: number): number {
  const newline = text.lastIndexOf("\n", index - 1);
  return Math.max(floor, newline + 1);
}

/** The end of the line holding `index` (its line break included), or `ceiling` when the line ends after it. */
function lineEndAfter(text: string, index: number, ceiling: number): number {
  const newline = text.indexOf("\n", index);
  return newline === -1 ? ceiling : Math.min(ceiling, newline + 1);
}

/**
 * `text` with look-alike, fullwidth and invisible characters folded (see foldedName), and where each
 * unit came from; null when it has none to fold. A fold never lengthens the text, so the origin map
 * is built as controlsView's is: one entry per unit that shortened, a bisection per lookup.
 */
function foldedView(text: string): EscapeView | null {
  const viewAt: number[] = [];
  const removedUpTo: number[] = [];
  let removed = 0;
  let changed = false;
  FOLDED_UNIT.lastIndex = 0;
  const view = text.replace(FOLDED_UNIT, (unit: string, offset: number) => {
    const folded = foldUnit(unit);
    if (folded === unit) return unit;
    changed = true;
    if (folded.length < unit.length) {
      removed += unit.length - folded.length;
      viewAt.push(offset + unit.length - removed);
      removedUpTo.push(removed);
    }
    return folded;
  });
  if (!changed) return null;
  return { text: view, origin: removalOrigin(viewAt, removedUpTo, viewAt.length) };
}
