import { removalOrigin, type EscapeView } from "./escapes.ts";

/**
 * HTML and XML character references: a page or an XML config a child fetched, or JSON written
 * into an HTML attribute (`data-config="{&quot;apiKey&quot;: &quot;…&quot;}"`), holds its quotes,
 * `=`, `:` and `&` as `&quot;`, `&#61;`, `&#x3a;`, `&amp;`; no rule reads a key or a value through
 * them. A text holding one is also read with them decoded (entityView), each reference one unit
 * mapped back to the whole reference, as an escaped view is (escapes.ts).
 */
const NAMED: Readonly<Record<string, string>> = { quot: '"', apos: "'", amp: "&", lt: "<", gt: ">", colon: ":", equals: "=", sol: "/", num: "#", nbsp: " " };
const REFERENCE = /&(?:(quot|apos|amp|lt|gt|colon|equals|sol|num|nbsp)|#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6}));/g;
/** Cheap test: most texts hold no reference. */
const ANY_REFERENCE = /&(?:quot|apos|amp|lt|gt|colon|equals|sol|num|nbsp|#\d{1,7}|#[xX][0-9a-fA-F]{1,6});/;

/** `text` with its character references decoded, and where each unit came from; null when it holds none. */
export function entityView(text: string): EscapeView | null {
  if (!ANY_REFERENCE.test(text)) return null;
  const viewAt: number[] = [];
  const removedUpTo: number[] = [];
  let removed = 0;
  const view = text.replace(REFERENCE, (reference: string, name: string | undefined, decimal: string | undefined, hex: string | undefined, offset: number) => {
    const code = name !== undefined ? NAMED[name]!.codePointAt(0)! : Number.parseInt(decimal ?? hex!, decimal !== undefined ? 10 : 16);
    // A code point out of range, or one that takes two units, is left as written.
    if (code > 0xffff || (code >= 0xd800 && code <= 0xdfff)) return reference;
    removed += reference.length - 1;
    viewAt.push(offset + reference.length - removed);
    removedUpTo.push(removed);
    return String.fromCharCode(code);
  });
  if (viewAt.length === 0) return null;
  return { text: view, origin: removalOrigin(viewAt, removedUpTo, viewAt.length) };
}
