import { argvRules } from "./argv.ts";
import { AUTH_RULES } from "./auth.ts";
import { CLI_RULES } from "./cli.ts";
import { concatenatedRules } from "./concatenated.ts";
import { COOKIE_RULES } from "./cookies.ts";
import { encodedRules } from "./encoded.ts";
import { foldedViews } from "./confusables.ts";
import { blankView, controlsView, cutAtGaps, gapsOf, linesView } from "./controls-view.ts";
import { CREDENTIAL_CALL_RULES } from "./credential-calls.ts";
import { codeEscapeViews } from "./code-escapes.ts";
import { entityView } from "./entities.ts";
import { percentViews } from "./percent.ts";
import { alignToEscapes, composeOrigins, unescapeOnce, type Origin } from "./escapes.ts";
import { KEY_RULES } from "./keys.ts";
import { REDIS_RULES } from "./redis.ts";
import { PRINTED_SECRET } from "./printed.ts";
import { PROSE_RULES } from "./prose.ts";
import { PHRASE_RULES } from "./seed-phrases.ts";
import { SQL_RULES } from "./sql.ts";
import { TAB_SEPARATED_RULES } from "./tab-separated.ts";
import { BEFORE, RAW_QUOTING, REDACTED, type Quoting, type Rule } from "./rule.ts";
import { TOKEN_RULES } from "./tokens.ts";
import { VAULT_TABLE_RULES } from "./vault-table.ts";

/**
 * How redaction runs: every rule reports the spans of secrets it sees, on the text and on its
 * escaped views (see escapes.ts); the spans are mapped back to the text, merged, and each merged
 * span becomes one `[REDACTED]`. Collecting spans first (rather than rewriting the text rule by
 * rule) means no rule ever reads another rule's output, and the result does not depend on order.
 */

/** Every rule, in no particular order (the result does not depend on it). */
export const ALL_RULES: readonly Rule[] = [...AUTH_RULES, ...COOKIE_RULES, ...TOKEN_RULES, ...KEY_RULES, ...PHRASE_RULES, ...PROSE_RULES, ...CLI_RULES, ...SQL_RULES, ...CREDENTIAL_CALL_RULES, ...VAULT_TABLE_RULES, ...TAB_SEPARATED_RULES, ...REDIS_RULES, PRINTED_SECRET, ...encodedRules(redactString), ...concatenatedRules(findSecretSpans), ...argvRules(findSecretSpans)];

/**
 * Most provider tokens start with a head that ends in `_`, `-`, `.` or `$` (`ghp_`, `sk-`, `ya29.`).
 * Scanning for fifty heads one regex at a time costs fifty passes over the text; instead one pass
 * stops at each such separator and asks a lookbehind whether a head ends there, and only then are
 * that position's rules tried (sticky, at the head). Rules with other heads run on their own.
 */
const SEPARATOR_END = /(?:[-_]|\\[.$])$/;
const isDispatched = (rule: Rule) => rule.heads !== undefined && rule.heads.every((head) => SEPARATOR_END.test(head));
const DISPATCHED = ALL_RULES.filter(isDispatched).map((rule) => ({ rule, sticky: new RegExp(rule.pattern.source, "y") }));
const RULES: readonly Rule[] = ALL_RULES.filter((rule) => !isDispatched(rule));
const HEAD_SCAN = new RegExp(
  String.raw`[-_.$](?<=${BEFORE}(${DISPATCHED.flatMap(({ rule }) => rule.heads ?? []).join("|")}))`,
  "g",
);

/**
 * Views beyond the text itself: a secret escaped up to eight times over (JSON in JSON in JSON…: a
 * tool call's arguments in a child's prompt, in a journal line, in a diagnostics line). The work
 * stays bounded: a view is made only while the text holds a structural escape, each view is
 * shorter than the one before, and a quote escaped eight times is 255 backslashes and a quote, so
 * a text escaped that deep is rare and at most nine passes are made over it.
 */
const MAX_VIEW_DEPTH = 8;

/** In a view, two units were quoted alike when they came from source sequences of one length. */
function quotingOf(origin: Origin): Quoting {
  return { sameQuoting: (a, b) => origin(a + 1) - origin(a) === origin(b + 1) - origin(b) };
}

/**
 * Escape-blind rules (provider tokens, key blocks, webhook URLs…) hold no quote or backslash, and
 * their boundaries accept an escaped `\n` before them, so a view shows them nothing new: views
 * skip them. The exception is a text with `\/` (PHP's JSON) or `\uXXXX` inside what could be a token
 * or a URL, for which views do run them.
 */
const ESCAPE_INSIDE_TOKEN = /\\(?:\/|u[0-9a-fA-F]{4})/;

/**
 * Most rules name a literal their matches hold (Rule.needles): `://`, `bearer`, a secret word of a
 * key name, a tool's name. Running ninety patterns over a short text costs more in calls than in
 * scanning, so every needle is looked for at once, in one pass, and only the rules whose needles
 * were seen run. The pass stops at each needle found and starts again one character later, so two
 * needles that overlap are both seen: at one position the longest needle matches (they are tried
 * longest first), and it opens the rules of every needle it holds.
 */
const NEEDLES = [...new Set(RULES.flatMap((rule) => rule.needles ?? []).map((needle) => needle.toLowerCase()))].sort((a, b) => b.length - a.length);
const NEEDLE_SCAN = new RegExp(NEEDLES.map((needle) => needle.replace(/[\\^$.*+?()[\]{}|/-]/g, "\\$&")).join("|"), "gi");
/** For each needle, the indexes in RULES of the rules it opens. */
const OPENED_BY = new Map(NEEDLES.map((found) => [found, RULES.flatMap((rule, i) => (rule.needles?.some((needle) => found.includes(needle.toLowerCase())) ? [i] : []))]));
const NEEDLED_RULES = RULES.filter((rule) => rule.needles !== undefined).length;
/** The indexes in RULES of the rules that run on every text. */
const UNNEEDLED = RULES.flatMap((rule, i) => (rule.needles === undefined ? [i] : []));
/** The scan each rule was last opened by: a rule is listed once per scan without a set made for each. */
const openedIn = new Float64Array(RULES.length);
let scans = 0;

/** The indexes in RULES of the rules with a needle in `text`. */
function openRules(text: string): number[] {
  const scan = ++scans;
  const opened: number[] = [];
  NEEDLE_SCAN.lastIndex = 0;
  for (let found = NEEDLE_SCAN.exec(text); found !== null && opened.length < NEEDLED_RULES; found = NEEDLE_SCAN.exec(text)) {
    for (const i of OPENED_BY.get(found[0].toLowerCase())!) {
      if (openedIn[i] === scan) continue;
      openedIn[i] = scan;
      opened.push(i);
    }
    NEEDLE_SCAN.lastIndex = found.index + 1;
  }
  return opened;
}

/** Where a collect pass puts what it finds, and how the scanned text maps back to the source. */
interface Sink {
  readonly origin: Origin | null;
  readonly quoting: Quoting;
  readonly spans: number[];
  readonly wraps: number[];
}

/** Push the spans of the secrets `rule` sees in `match` (see collect). */
function push(sink: Sink, rule: Rule, match: RegExpExecArray): void {
  const { origin, spans } = sink;
  if (rule.findings) {
    for (const { start, end, quoteAt } of rule.findings(match, sink.quoting)) {
      if (end <= start) continue;
      const from = match.index + start;
      const to = match.index + end;
      spans.push(origin ? origin(from) : from, origin ? origin(to) : to);
      if (quoteAt !== undefined) {
        const quote = match.index + quoteAt;
        sink.wraps.push(origin ? origin(from) : from, origin ? origin(to) : to, origin ? origin(quote) : quote, origin ? origin(quote + 1) : quote + 1);
      }
    }
    return;
  }
  const span = rule.secret ? rule.secret(match, sink.quoting) : ([0, match[0].length] as const);
  if (!span || span[1] <= span[0]) return;
  const start = match.index + span[0];
  const end = match.index + span[1];
  if (origin) spans.push(origin(start), origin(end));
  else spans.push(start, end);
}

/** How many times a rule's pattern has been run over a text: the work redaction does, as tests count it. */
let patternRuns = 0;
export const rulePatternRuns = (): number => patternRuns;
/**
 * Readings beyond the gates every text passes (the needle and head scans, the rules that run on
 * every text): a rule a needle or a token head opened, or a view. A text that needed none costs
 * less to read again than to remember (texts.ts).
 */
let deeperReadings = 0;
export const deeperRedactionReadings = (): number => deeperReadings;

/** Run `rule` over `text` (see collect). */
function run(rule: Rule, text: string, sink: Sink, tokens: boolean): void {
  if ((!tokens && rule.escapeBlind) || text.length < (rule.minChars ?? 0)) return;
  patternRuns++;
  const pattern = rule.pattern;
  pattern.lastIndex = 0;
  let match: RegExpExecArray | null;
  while ((match = pattern.exec(text)) !== null) {
    if (match[0].length === 0) pattern.lastIndex++;
    else push(sink, rule, match);
  }
  rule.scanned?.();
}

/**
 * Push the [start, end) spans of every secret the rules find in `text`, mapped through `origin`,
 * and to `wraps` [start, end, quoteStart, quoteEnd] for a span to be written quoted (see Finding).
 */
function collect(text: string, origin: Origin | null, spans: number[], wraps: number[], tokens: boolean): void {
  const sink: Sink = { origin, quoting: origin ? quotingOf(origin) : RAW_QUOTING, spans, wraps };
  // Rules run in any order: what they find is merged, never read by another rule.
  for (const i of UNNEEDLED) run(RULES[i]!, text, sink, tokens);
  for (const i of openRules(text)) {
    deeperReadings++;
    run(RULES[i]!, text, sink, tokens);
  }
  if (!tokens) return;
  HEAD_SCAN.lastIndex = 0;
  let head: RegExpExecArray | null;
  while ((head = HEAD_SCAN.exec(text)) !== null) {
    const at = head.index + 1 - head[1]!.length;
    deeperReadings++;
    for (const { rule, sticky } of DISPATCHED) {
      sticky.lastIndex = at;
      const match = sticky.exec(text);
      if (match) push(sink, rule, match);
    }
  }
}

/**
 * Collect on `text`, and on the parts of it folded that spell a name with look-alike letters
 * (`pаssword` with a Cyrillic `а`, fullwidth letters, a zero-width joiner inside: confusables.ts).
 */
function collectFolded(text: string, origin: Origin | null, spans: number[], wraps: number[], tokens: boolean): void {
  collect(text, origin, spans, wraps, tokens);
  for (const folded of foldedViews(text)) collect(folded.text, origin ? composeOrigins(origin, folded.origin) : folded.origin, spans, wraps, tokens);
}

/**
 * Collect on `text`, and on it with its gaps written as the breaks they are (see linesView): NEL
 * as a line break, where the text itself is not read (a value would run on past it). The text's
 * own reading (not a view's: gaps are cut in the text's indexes) is also read with its gaps as
 * blanks (see blankView), cut again where that runs on into the next line.
 */
function collectSpaced(text: string, origin: Origin | null, spans: number[], wraps: number[], tokens: boolean): void {
  const lines = linesView(text);
  if (lines === null) return collectFolded(text, origin, spans, wraps, tokens);
  if (!lines.nel) collectFolded(text, origin, spans, wraps, tokens);
  const lineSpans: number[] = [];
  collectFolded(lines.text, origin, lineSpans, wraps, tokens);
  if (origin === null) {
    const blankSpans: number[] = [];
    collectFolded(blankView(text), null, blankSpans, wraps, tokens);
    cutAtGaps(text, gapsOf(text, null), blankSpans, [...spans, ...lineSpans]);
    for (const index of blankSpans) spans.push(index);
  }
  for (const index of lineSpans) spans.push(index);
}

/** Collect on `text` (itself a view of the source when `origin` is set) and on its escaped views. */
function collectWithViews(text: string, origin: Origin | null, spans: number[], wraps: number[]): void {
  collectSpaced(text, origin, spans, wraps, true);
  const tokensInViews = ESCAPE_INSIDE_TOKEN.test(text);
  let view = text;
  let at = origin;
  for (let depth = 0; depth < MAX_VIEW_DEPTH; depth++) {
    const next = unescapeOnce(view);
    if (!next) break;
    at = at ? composeOrigins(at, next.origin) : next.origin;
    collectSpaced(next.text, at, spans, wraps, tokensInViews);
    // A colour code or control written escaped (`\u001b[31m` in a JSON string) splits a secret
    // only once decoded: the decoded view is read without them too, cut again at a separator
    // written escaped (`\u2028`) as the text's own reading is at one written as itself.
    const bare = origin ? null : controlsView(next.text);
    if (bare) {
      const bareSpans: number[] = [];
      collectFolded(bare.text, composeOrigins(at, bare.origin), bareSpans, wraps, true);
      cutAtGaps(text, gapsOf(next.text, at), bareSpans, spans);
      for (const index of bareSpans) spans.push(index);
    }
    view = next.text;
  }
}

/**
 * Tabs, line breaks and printable ASCII but the backslash: a text with no escape (escapes.ts), no
 * look-alike or invisible letter (confusables.ts), no gap and no control character
 * (controls-view.ts), so it has no view beyond itself.
 */
const PLAIN_PRINTABLE = /^[\t\n\x20-\x5b\x5d-\x7e]*$/;

/** Collect on `text` with its HTML character references decoded (see entityView), and on its lines with code escapes decoded (see codeEscapeViews) or URL-decoded (see percentViews), when it holds any. */
function collectEntities(text: string, spans: number[], wraps: number[]): void {
  const decoded = entityView(text);
  if (decoded !== null) {
    deeperReadings++;
    collectWithViews(decoded.text, decoded.origin, spans, wraps);
  }
  for (const view of [...(text.includes("\\") ? codeEscapeViews(text) : []), ...percentViews(text)]) {
    deeperReadings++;
    collectWithViews(view.text, view.origin, spans, wraps);
  }
}

/**
 * Secret spans of `text`, flat [start, end, start, end, …], unsorted, possibly overlapping. Spans
 * to be written quoted go to `wraps` as well (see collect), for `applySpans`.
 */
export function findSecretSpans(text: string, wraps: number[] = []): number[] {
  const spans: number[] = [];
  // Most texts are printable ASCII without a backslash: no escaped, folded, spaced or bare view
  // can show anything the text does not, and one test says so instead of one per view.
  if (PLAIN_PRINTABLE.test(text)) {
    collect(text, null, spans, wraps, true);
    collectEntities(text, spans, wraps);
    return spans;
  }
  deeperReadings++;
  collectWithViews(text, null, spans, wraps);
  collectEntities(text, spans, wraps);
  // Control characters or escape sequences inside a secret hide it, and stripping them for a
  // terminal would show it whole: the text without them is read too (controls-view.ts).
  const bare = controlsView(text);
  if (bare) {
    const bareSpans: number[] = [];
    collectWithViews(bare.text, bare.origin, bareSpans, wraps);
    // What a line or paragraph separator joins may be the next line, not the secret's rest.
    cutAtGaps(text, gapsOf(text, null), bareSpans, spans);
    for (const index of bareSpans) spans.push(index);
  }
  if (text.includes("\\")) {
    // Spans from views already end on escape boundaries; spans found in the raw text may not.
    for (let i = 0; i < spans.length; i += 2) {
      const [start, end] = alignToEscapes(text, spans[i]!, spans[i + 1]!);
      spans[i] = start;
      spans[i + 1] = Math.max(start, end);
    }
  }
  return spans;
}

/**
 * Replace each merged span (overlapping or touching spans merge) with `[REDACTED]`, written
 * between quotes when `wraps` holds exactly that span (a bare number in JSON: see Finding).
 */
export function applySpans(text: string, spans: readonly number[], wraps: readonly number[] = []): string {
  if (spans.length === 0) return text;
  const replacement = (start: number, end: number): string => {
    for (let i = 0; i < wraps.length; i += 4) {
      if (wraps[i] === start && wraps[i + 1] === end) {
        const quote = text.slice(wraps[i + 2]!, wraps[i + 3]!);
        return quote + REDACTED + quote;
      }
    }
    return REDACTED;
  };
  const order = Array.from({ length: spans.length / 2 }, (_, i) => i).sort((a, b) => spans[2 * a]! - spans[2 * b]!);
  const parts: string[] = [];
  let cursor = 0;
  let open = -1;
  let close = -1;
  for (const i of order) {
    const start = spans[2 * i]!;
    const end = spans[2 * i + 1]!;
    if (end <= start) continue;
    if (open !== -1 && start <= close) {
      close = Math.max(close, end);
      continue;
    }
    if (open !== -1) {
      parts.push(text.slice(cursor, open), replacement(open, close));
      cursor = close;
    }
    open = start;
    close = end;
  }
  if (open !== -1) parts.push(text.slice(cursor, open), replacement(open, close));
  parts.push(text.slice(close));
  return parts.join("");
}

export function redactString(text: string): string {
  const wraps: number[] = [];
  const spans = findSecretSpans(text, wraps);
  return applySpans(text, spans, wraps);
}
