import { judgeValue, keyAllowed } from "./key-names.ts";
import type { Finding, Quoting } from "./rule.ts";

/**
 * A shell word written in pieces: `API_TOKEN='ghp_aB3'"dE5…"`, `DB_PASSWORD=hun''ter2`. The shell
 * joins adjacent quoted and unquoted pieces into one value, so a secret split by quotes (an empty
 * `''` inside it, or two quoted halves) is the secret. The assignment rule (keys.ts) reads the
 * first piece; this reads the rest and judges the joined value.
 */

/**
 * Pieces after the first: quoted strings of a token's characters (empty too), unquoted runs, and
 * a backslash before a line break, which the shell takes out (`TOKEN=ghp_aB3\` then `dE5…`).
 */
const PIECES = /(?:'[\w+/=.~!@#$%^*-]{0,4096}'|"[\w+/=.~!@#$%^*-]{0,4096}"|[\w+/=.~!@#$%^*-]{1,4096}|\\\r?\n){1,16}/y;
/** What the shell takes out of a word: quotes, and a backslash before a line break. */
const REMOVED = /['"]|\\\r?\n/g;
const QUOTE = /^['"]/;
const PIECE_CHAR = /^[\w+/=.~!@#$%^*-]/;

/** The first piece of an assignment's value, as keys.ts's ASSIGNMENT read it. */
export interface FirstPiece {
  /** The assignment's name and the character before it. */
  readonly key: string;
  readonly before: string;
  /** The value as written, quotes included, and where it starts and ends in the input. */
  readonly value: string;
  readonly start: number;
  readonly end: number;
}

/**
 * When the value of `KEY=<first piece>` goes on as one shell word: where the word ends (`readTo`),
 * and its finding (relative to `matchAt`) when the joined value is a secret; else undefined. In an escaped view a quoted piece's two quotes must have been
 * escaped alike (see Quoting): the end of a value's quotes and of the JSON string around it
 * (`…pass=x\""`, decoded `…pass=x""`) are no piece.
 */
export function shellWordFinding(input: string, quoting: Quoting, matchAt: number, first: FirstPiece): { readTo: number; finding?: Finding } | undefined {
  const { key, before, value, start, end } = first;
  const next = input.slice(end, end + 1);
  const quoted = QUOTE.test(value);
  // An unquoted first piece ran to the next quote, or took the backslash of a continued line; a quoted one ends at its own.
  const continued = !quoted && value.endsWith("\\") && /^\r?\n/.test(input.slice(end, end + 2));
  if (!QUOTE.test(next) && !(quoted && PIECE_CHAR.test(next)) && !continued) return undefined;
  PIECES.lastIndex = continued ? end - 1 : end;
  const rest = PIECES.exec(input)?.[0].slice(continued ? 1 : 0);
  if (rest === undefined || rest === "" || /^\r?\n$/.test(rest)) return undefined;
  for (const piece of rest.matchAll(/'[^']*'|"[^"]*"/g)) {
    if (!quoting.sameQuoting(end + piece.index, end + piece.index + piece[0].length - 1)) return undefined;
  }
  const readTo = end + rest.length;
  const joined = ((quoted ? value.slice(1, -1) : value) + rest).replace(REMOVED, "");
  if (!keyAllowed(key, before) || !judgeValue({ key, op: "=", spaced: false, value: joined, endsLine: false })) return { readTo };
  return { readTo, finding: { start: start - matchAt, end: readTo - matchAt } };
}
