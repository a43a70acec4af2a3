/** What every redaction rule is, and the small helpers the rule tables share. */

export const REDACTED = "[REDACTED]";

/**
 * How the scanned text was quoted. In an escaped view (escapes.ts) a `"` may come from `\"` or
 * from a bare `"`: a quoted value whose two quotes came from different depths is not a value,
 * it is the end of one string and the start of another.
 */
export interface Quoting {
  /** Whether the units at `a` and `b` (indexes into the scanned text) were escaped alike. */
  sameQuoting(a: number, b: number): boolean;
}

/** The text itself, unescaped: every unit is quoted alike. */
export const RAW_QUOTING: Quoting = { sameQuoting: () => true };

/** The secret inside one match, as [start, end) offsets relative to the match; null: not a secret. */
export type SecretOf = (match: RegExpExecArray, quoting: Quoting) => readonly [number, number] | null;

/**
 * One secret of a match that may hold several (the items of a list), offsets relative to the
 * match. `quoteAt`, when set, is the offset of a quote in the scanned text: the secret is a bare
 * value (a number) inside JSON, and its `[REDACTED]` is written between two of that quote, as the
 * quote is written in the source (`"` or `\"`), so the JSON stays valid.
 */
export interface Finding {
  readonly start: number;
  readonly end: number;
  readonly quoteAt?: number;
}

export interface Rule {
  readonly name: string;
  /** A global pattern. It must stay linear: bounded or unambiguous quantifiers only. */
  readonly pattern: RegExp;
  /**
   * Literal text, compared ignoring case, at least one of which every match holds, or what its
   * lookbehinds read before it: a text holding none is skipped without running the pattern. The
   * engine looks for every rule's needles at once, in one pass over the text (engine.ts). A rule
   * without needles runs on every text.
   */
  readonly needles?: readonly string[];
  /** Default: the whole match is the secret. */
  readonly secret?: SecretOf;
  /** Instead of `secret`: every secret of the match. */
  readonly findings?: (match: RegExpExecArray, quoting: Quoting) => readonly Finding[];
  /**
   * Matches hold no quote and no escape, and nothing around them depends on one: a decoded view of
   * the text (escapes.ts) can show no match the text itself does not, so views skip the rule.
   */
  readonly escapeBlind?: boolean;
  /** Called once the pattern has run over a text: a rule that remembers the text across its matches lets go of it here. */
  readonly scanned?: () => void;
  /**
   * The shortest text a match can be found in (what its lookbehinds read included): a shorter text
   * is not scanned. Set on the rules without needles, which would otherwise run on every text.
   */
  readonly minChars?: number;
  /** For `prefixed` rules: the literal heads (regex source) the match starts with. */
  readonly heads?: readonly string[];
}

/** Before a token: the start, a character that cannot be part of it, or an escaped `\n`/`\r`/`\t`. */
export const BEFORE = String.raw`(?:^|[^A-Za-z0-9_-]|\\[nrt])`;
/** After a token: nothing that could continue it. */
export const E = "(?![A-Za-z0-9_-])";

/**
 * The secret is capture group `n`, and groups 1..n are written back to back from the start of the
 * match (lookbehinds are zero-width), so its offset is the sum of the groups before it.
 */
export function group(n: number, accept?: (match: RegExpExecArray) => boolean): SecretOf {
  return (match) => {
    if (accept && !accept(match)) return null;
    let start = 0;
    for (let i = 1; i < n; i++) start += match[i]?.length ?? 0;
    const length = match[n]?.length ?? 0;
    return length > 0 ? [start, start + length] : null;
  };
}

/** The whole match, when `accept` agrees. */
export function whole(accept: (text: string) => boolean): SecretOf {
  return (match) => (accept(match[0]) ? [0, match[0].length] : null);
}

/** Random-looking: has a digit, or both letter cases. Words and identifiers rarely do. */
export const looksRandom = (text: string): boolean => /\d/.test(text) || (/[A-Z]/.test(text) && /[a-z]/.test(text));

export const hasDigit = (text: string): boolean => /\d/.test(text);

/** How often neighbours change class (upper, lower, digit, other): random text changes at most steps, words and paths rarely. */
export function classChanges(text: string): number {
  const classOf = (c: string) => (c >= "a" && c <= "z" ? 0 : c >= "A" && c <= "Z" ? 1 : c >= "0" && c <= "9" ? 2 : 3);
  let changes = 0;
  for (let i = 1; i < text.length; i++) if (classOf(text[i]!) !== classOf(text[i - 1]!)) changes++;
  return changes;
}

/**
 * A token that starts with a literal `head` (regex source) followed by `body`. The head comes first
 * in the pattern so the regex engine can skip ahead to it; a pattern that opened with a lookbehind
 * would be tried at every position, several times slower. The boundary before the head is checked
 * by a lookbehind placed after it.
 */
export function prefixed(name: string, heads: string | readonly string[], body: string, accept?: (text: string) => boolean): Rule {
  const list = typeof heads === "string" ? [heads] : heads;
  const head = list.join("|");
  return {
    name,
    heads: list,
    // A head written as plain text is the rule's needle; the engine finds heads that end in a separator by its own scan.
    ...(list.every((each) => /^[A-Za-z0-9]+$/.test(each)) ? { needles: list } : {}),
    escapeBlind: true,
    pattern: new RegExp(`(?:${head})(?<=${BEFORE}(?:${head}))${body}${E}`, "g"),
    ...(accept ? { secret: whole(accept) } : {}),
  };
}

/**
 * A token found by a literal in its middle (`Q~`, `.atlasv1.`, `:AA`): the pattern starts at the
 * literal, and capture group 1, inside the lookbehind, is the part of the token before it. The
 * literal is the rule's needle, unless it is a single character (most texts hold one).
 */
export function anchored(name: string, literal: string, source: string, accept?: (text: string) => boolean): Rule {
  return {
    name,
    ...(literal.length > 1 ? { needles: [literal] } : {}),
    pattern: new RegExp(source, "g"),
    escapeBlind: true,
    secret: (match) => {
      const before = match[1]?.length ?? 0;
      const token = match.input.slice(match.index - before, match.index + match[0].length);
      return !accept || accept(token) ? [-before, match[0].length] : null;
    },
  };
}
