import { composeOrigins, removalOrigin, type EscapeView } from "./escapes.ts";
import { windowViews } from "./line-windows.ts";

/**
 * URL-encoded text: a config string in one env value (`DATABASE_CONFIG=host%3Ddb%26password%3D…`),
 * a URL with a password inside a query string (`?next=https%3A%2F%2Fdeploy%3A…%40ci`), a form body
 * encoded again. No rule reads `=`, `:`, `&` or `@` written as `%3D`, `%3A`, `%26`, `%40`: a text
 * holding one is also read with its percent escapes of printable ASCII decoded and `+` as a space
 * (percentView), each
 * escape one unit mapped back to the whole escape, as an escaped view is (escapes.ts). A secret
 * found there goes as written, encoded.
 */
const ESCAPE = /%([2-7][0-9A-Fa-f])|\+/g;
/**
 * Cheap test: the escapes of the characters a key and its value are told by (`=`, `:`, `&`, `@`,
 * `"`), of a letter or `_` (a URL never needs them escaped: `pass%77ord=…` or `%67hp_…` is a name or
 * a token's head spelt so no rule reads it), or of `%` before one (encoded twice).
 */
const STRUCTURAL = /%(?:25)?(?:3[DdAa]|2[26]|40|4[1-9A-Fa-f]|5[0-9AaFf]|6[1-9A-Fa-f]|7[0-9Aa])/;

/** `text` with its percent escapes of printable ASCII decoded, and where each unit came from; null when it holds no structural one. */
function percentView(text: string): EscapeView | null {
  if (!STRUCTURAL.test(text)) return null;
  const viewAt: number[] = [];
  const removedUpTo: number[] = [];
  let removed = 0;
  const view = text.replace(ESCAPE, (escape: string, hex: string | undefined, offset: number) => {
    // A form's `+` is a space: an encoded value is never a run of words joined by `+`.
    if (hex === undefined) return " ";
    const code = Number.parseInt(hex, 16);
    if (code === 0x7f) return escape;
    removed += escape.length - 1;
    viewAt.push(offset + escape.length - removed);
    removedUpTo.push(removed);
    return String.fromCharCode(code);
  });
  return { text: view, origin: removalOrigin(viewAt, removedUpTo, viewAt.length) };
}

/** How many times a URL-encoded text is decoded: a form body encoded into a URL, encoded again. */
const MAX_PERCENT_DEPTH = 3;

/** `text` URL-decoded once, and each of those decoded again while it holds a structural escape, each mapped back to `text`. */
function decodedViews(text: string): EscapeView[] {
  const views: EscapeView[] = [];
  for (let view = percentView(text); view !== null && views.length < MAX_PERCENT_DEPTH; ) {
    const previous = views.at(-1);
    const origin = previous ? composeOrigins(previous.origin, view.origin) : view.origin;
    views.push({ text: view.text, origin });
    view = percentView(view.text);
  }
  return views;
}

const STRUCTURAL_ALL = new RegExp(STRUCTURAL.source, "g");

/**
 * The URL-decoded views of `text` (see decodedViews), each mapped back to `text`: not of the whole
 * text but of each run of its lines that hold a structural escape, with their line breaks. An
 * encoded value sits within its line (its own line breaks are `%0A`), and a secret that only the
 * decoding shows holds a decoded character, so a line without one shows nothing new decoded; a
 * message of eight kilobytes with one encoded URL in it is read decoded for that line alone.
 */
export function percentViews(text: string): EscapeView[] {
  if (!STRUCTURAL.test(text)) return [];
  return windowViews(text, STRUCTURAL_ALL, decodedViews);
}
