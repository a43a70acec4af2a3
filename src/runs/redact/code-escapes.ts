import { removalOrigin, type EscapeView } from "./escapes.ts";
import { windowViews } from "./line-windows.ts";

/**
 * Escapes a language or a shell decodes that JSON has not: `\x67` (C, JavaScript, Python, `printf`,
 * `echo -e`, bash's `$'…'`), `\u{67}` (JavaScript, Rust, Swift) and three octal digits `\147`
 * (C, Python, `printf`). A token's head written so (`"\x67hp_…"`) hides it from every rule while
 * the program it sits in still reads the token. A text holding one is also read with those
 * decoded (codeEscapeView), each one unit mapped back to the whole escape, as an escaped view is
 * (escapes.ts). Only printable ASCII is decoded: a colour code or an emoji spells no token's text.
 * Backslashes before the escape are part of it: inside a JSON string it is written `\\x67`, and
 * the span taken must hold both, or the JSON would keep a lone `\\` before `[REDACTED]`. A run is
 * matched from its first backslash only, so a long run costs its length once, not its square.
 */
const CODE_ESCAPE = /(?<!\\)\\+(?:x([0-9a-fA-F]{2})|u\{0*([0-9a-fA-F]{1,2})\}|([0-3][0-7]{2}))/g;
/** Cheap test: most texts hold none. */
const ANY_CODE_ESCAPE = /\\(?:x[0-9a-fA-F]{2}|u\{0*[0-9a-fA-F]{1,2}\}|[0-3][0-7]{2})/;

/**
 * The lines of `text` that hold such an escape (consecutive ones together, with their line breaks),
 * each with its escapes decoded and mapped back to `text`: an escape sits inside its token's line,
 * so a message of eight kilobytes with one escaped head is read decoded for that line alone.
 */
export function codeEscapeViews(text: string): EscapeView[] {
  return windowViews(text, ANY_CODE_ESCAPE_ALL, (part) => {
    const view = decoded(part);
    return view === null ? [] : [view];
  });
}

const ANY_CODE_ESCAPE_ALL = new RegExp(ANY_CODE_ESCAPE.source, "g");

/** `text` with its hex, code point and octal escapes of printable ASCII decoded, and where each unit came from; null when it holds none. */
function decoded(text: string): EscapeView | null {
  const viewAt: number[] = [];
  const removedUpTo: number[] = [];
  let removed = 0;
  const view = text.replace(CODE_ESCAPE, (escape: string, hex: string | undefined, point: string | undefined, octal: string | undefined, offset: number) => {
    const code = octal !== undefined ? Number.parseInt(octal, 8) : Number.parseInt(hex ?? point!, 16);
    if (code < 0x20 || code > 0x7e) return escape;
    removed += escape.length - 1;
    viewAt.push(offset + escape.length - removed);
    removedUpTo.push(removed);
    return String.fromCharCode(code);
  });
  if (viewAt.length === 0) return null;
  return { text: view, origin: removalOrigin(viewAt, removedUpTo, viewAt.length) };
}
