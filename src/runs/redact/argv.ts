import { findingsInParts, spansByPart, type JoinedPart as Part } from "./joined-parts.ts";
import type { Finding, Rule } from "./rule.ts";

/**
 * A command line written as a list of its arguments (exec form): Docker's `CMD ["app",
 * "--api-key", "…"]`, a Kubernetes container's `args:` (a flow list, or a block list a line each),
 * Compose's `command: [...]`, code's `spawn("mysql", ["-u", "root", "-p…"])` and
 * `subprocess.run([...])`. No command-line rule reads a flag and its value apart in two quoted
 * items, so the items of such a list are read joined by spaces, as the command line they are, and
 * what the rules find there goes from the items that hold it (as concatenated.ts does for `+`).
 */

/** The most items joined, and the longest one read. */
const MAX_ITEMS = 64;
const MAX_ITEM_CHARS = 512;
/** A string literal item (Python's f-string too): group 1 its quote. */
const ITEM = String.raw`f?(["'])[^"'\\\n]{0,${MAX_ITEM_CHARS}}\1`;
/** Between two items: a comma, perhaps a line break, perhaps the `[` that opens the arguments after a program's name. */
const BETWEEN = String.raw`[ \t]*,[ \t]*(?:\r?\n[ \t]*)?\[?[ \t]*`;
/** One item again, read one by one: group 2 its content. */
const NEXT_ITEM = new RegExp(String.raw`(?:${BETWEEN})?f?(["'])([^"'\\\n]{0,${MAX_ITEM_CHARS}})\1`, "y");

/** A YAML block list of plain or quoted scalars, a line each (group 1 the indentation). */
const BLOCK = String.raw`(?<=^|\n)([ \t]*)- [^\n]{1,${MAX_ITEM_CHARS}}(?:\r?\n\1- [^\n]{1,${MAX_ITEM_CHARS}}){1,${MAX_ITEMS - 1}}`;
const BLOCK_ITEM = /- (["']?)([^\n]*?)\1[ \t]*\r?$/;

/** A flag: one or two dashes and a letter or digit (a PEM block's `-----BEGIN` is none). */
const FLAG = /^--?[A-Za-z0-9]/;

/** `spans` is the engine's own reading of a text: the secret spans every rule finds in it. */
export function argvRules(spans: (text: string) => readonly number[]): readonly Rule[] {
  const flowList = new RegExp(String.raw`${ITEM}(?:${BETWEEN}${ITEM}){1,${MAX_ITEMS - 1}}`, "g");
  const blockList = new RegExp(BLOCK, "g");
  /** Reads the joined parts, putting back where `pattern`'s own scan stands (the joined text may run it again). */
  const read = (pattern: RegExp, parts: readonly Part[]): Finding[] => {
    if (!parts.some((part) => FLAG.test(part.text))) return []; // no flag, no command line
    const resume = pattern.lastIndex;
    try {
      return findingsInParts(parts, spans(parts.map((part) => part.text).join(" ")), " ");
    } finally {
      pattern.lastIndex = resume;
    }
  };
  return [
    {
      name: "argv-flow-list",
      needles: ['"-', "'-"],
      pattern: flowList,
      findings: (match) => {
        const parts: Part[] = [];
        for (let at = 0; at < match[0].length; ) {
          NEXT_ITEM.lastIndex = at;
          const item = NEXT_ITEM.exec(match[0]);
          if (item === null) break;
          parts.push({ at: NEXT_ITEM.lastIndex - 1 - item[2]!.length, text: item[2]! });
          at = NEXT_ITEM.lastIndex;
        }
        return read(flowList, parts);
      },
    },
    {
      name: "argv-block-list",
      needles: ["- -"],
      pattern: blockList,
      findings: (match) => {
        const parts: Part[] = [];
        let at = 0;
        for (const line of match[0].split("\n")) {
          const item = BLOCK_ITEM.exec(line);
          if (item) parts.push({ at: at + item.index + 2 + item[1]!.length, text: item[2]! });
          at += line.length + 1;
        }
        return read(blockList, parts);
      },
    },
  ];
}

/**
 * A list of arguments in a structured value (`{ "args": ["--password", "…"] }`, a spawn's argv in
 * a tool call): its items with what the rules find in them joined taken out, or undefined when it
 * is no such list or they find nothing. `spans` and `apply` are the engine's.
 */
export function argvItems(items: readonly unknown[], spans: (text: string) => readonly number[], apply: (text: string, spans: readonly number[]) => string): string[] | undefined {
  if (items.length < 2 || items.length > MAX_ITEMS) return undefined;
  let flag = false;
  for (const item of items) {
    if (typeof item !== "string" || item.length > MAX_ITEM_CHARS || item.includes("\n")) return undefined;
    if (FLAG.test(item)) flag = true;
  }
  if (!flag) return undefined;
  const texts = items as readonly string[];
  const found = spans(texts.join(" "));
  if (found.length === 0) return undefined;
  const byItem = spansByPart(texts, found, " ");
  return texts.map((text, n) => (byItem[n]!.length === 0 ? text : apply(text, byItem[n]!)));
}
