import { BEFORE, type Finding, type Rule } from "./rule.ts";

/**
 * A JWT split across lines: broken after its dots (`header.` / `payload.` / `signature`, as people
 * lay one out to read it) or wrapped at a fixed width (a terminal's or a YAML block scalar's lines,
 * indented alike). The one-line token rule (tokens.ts) sees only its first piece, and the rest
 * would be shown whole.
 */

/** A line break, real or escaped in a JSON string, and the next line's indentation. */
const BREAK = /(?:\r?\n|\\r\\n|\\n)[ \t]*/y;
/** One line of the token: base64url and dots. */
const PIECE = /[A-Za-z0-9_.-]+/y;
/** What may follow a line's last piece: its end, a quote closing a string, or a space before a comment. */
const LINE_END = /^(?:[\r\n\\"' \t]|)$/;
const JWT = /^ey[A-Za-z0-9_-]{10,}\.ey[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*$/;
const MAX_LINES = 64;

/**
 * The token that opens at `start` with its first line `first`, its lines joined: where the walk
 * over its lines stopped, and where the token ends (-1 when the joined lines are no JWT). A whole
 * line is joined to the one before when that one ends at a dot, or is as long as the first
 * (wrapped at its width); a third dot ends the walk, as a JWT has two.
 */
function wrappedToken(input: string, start: number, first: string): { walked: number; end: number } {
  const pieces = [first];
  let dots = first.split(".").length - 1;
  let at = start + first.length;
  let lineLength = first.length;
  let end = -1;
  for (let lines = 1; lines < MAX_LINES && dots <= 2; lines++) {
    if (!pieces.at(-1)!.endsWith(".") && lineLength !== first.length) break;
    BREAK.lastIndex = at;
    const gap = BREAK.exec(input);
    if (gap === null) break;
    PIECE.lastIndex = at + gap[0].length;
    const piece = PIECE.exec(input)?.[0];
    // A piece is a whole line: `NEXT=1` after a token as long as the lines is no part of it.
    if (piece === undefined || !LINE_END.test(input[PIECE.lastIndex] ?? "")) break;
    dots += piece.split(".").length - 1;
    if (dots > 2) break;
    pieces.push(piece);
    at = PIECE.lastIndex;
    lineLength = piece.length;
    if (dots === 2) end = at;
  }
  return { walked: at, end: end !== -1 && JWT.test(pieces.join("")) ? end : -1 };
}

export const WRAPPED_JWT: Rule = {
  name: "wrapped-jwt",
  needles: ["eyJ"],
  escapeBlind: true,
  // The token's first line: its header, and perhaps more of it, up to a line break.
  pattern: new RegExp(String.raw`eyJ(?<=${BEFORE}eyJ)[A-Za-z0-9_-]{5,}(?:\.[A-Za-z0-9_-]*){0,2}(?=\r?\n|\\r\\n|\\n)`, "g"),
  findings: (m) => {
    const { walked, end } = wrappedToken(m.input, m.index, m[0]);
    // The lines walked are not walked again from a later line: that keeps the rule linear.
    WRAPPED_JWT.pattern.lastIndex = Math.max(WRAPPED_JWT.pattern.lastIndex, walked);
    return end === -1 ? [] : [{ start: 0, end: end - m.index } satisfies Finding];
  },
};
