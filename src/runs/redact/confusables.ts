import type { EscapeView } from "./escapes.ts";

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
 * mathematical letter, or a look-alike letter next to a Latin letter or before an operator (a name
 * that mixes scripts). Prose in Cyrillic or Greek alone, CJK text with its fullwidth punctuation and
 * emoji joined by ZWJ open it rarely, so such text is not read twice.
 */
const FOLD_GATE = new RegExp(
  `[A-Za-z]${INVISIBLE}|${INVISIBLE}[A-Za-z]|[\uff21-\uff3a\uff41-\uff5a]|\ud835[\udc00-\udfff]|[A-Za-z]${LOOK_ALIKE}|${LOOK_ALIKE}[A-Za-z:=]`,
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

/**
 * `text` with look-alike, fullwidth and invisible characters folded (see foldedName), and where each
 * unit came from; null when the gate finds none. A fold never lengthens the text, so the origin map
 * is built as controlsView's is: one entry per unit that shortened, a bisection per lookup.
 */
export function foldedView(text: string): EscapeView | null {
  // The cheap test first: most text is ASCII (its UTF-8 is as long as it is), with nothing to fold.
  if (Buffer.byteLength(text, "utf8") === text.length || !FOLD_GATE.test(text)) return null;
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
  const origin = (index: number): number => {
    let low = 0;
    let high = viewAt.length - 1;
    while (low <= high) {
      const mid = (low + high) >> 1;
      if (viewAt[mid]! <= index) low = mid + 1;
      else high = mid - 1;
    }
    return index + (high >= 0 ? removedUpTo[high]! : 0);
  };
  return { text: view, origin };
}
