import { findingsInParts, type JoinedPart } from "./joined-parts.ts";
import type { Rule } from "./rule.ts";

/**
 * A secret split across string literals joined by `+` (`"ghp_" + "aB3d…"`, `'sk-proj-' + 'Xq7…'`,
 * a long key wrapped over two lines of code) or written side by side, which Python and C join
 * (`("ghp_aB3d…"\n    "eF5g…")`): each literal alone is too short or headless for its rule, so the
 * literals of a chain are joined and the joined text is read by every rule; what they find there
 * goes from the literals that hold it. A chain broken by anything but `+` and whitespace (a
 * variable, a call, a comment, a comma, a line break before the `+`) is not joined.
 */

/** The most literals joined, and the longest one read: a key wrapped over a few lines of code. */
const MAX_PARTS = 8;
const MAX_PART_CHARS = 256;
const LITERAL = String.raw`(["'\x60])[^"'\x60\\\n]{1,${MAX_PART_CHARS}}\1`;
const LINE_BREAK = String.raw`(?:\r?\n|\\n)[ \t]{0,64}`;
/**
 * A `+` and the next literal (group 2 its quote), perhaps on the next line; or, with no `+`, the
 * next literal in double or single quotes after whitespace or a line break: Python's and C's
 * adjacent literals, which the language joins (`("ghp_aB3…"\n    "dE5…")`).
 */
const NEXT = String.raw`(?:[ \t]{0,16}\+[ \t]{0,16}(?:${LINE_BREAK})?|(?:[ \t]{1,16}(?:${LINE_BREAK})?|${LINE_BREAK})(?=["']))(["'\x60])[^"'\x60\\\n]{1,${MAX_PART_CHARS}}\2`;
/** One literal of a chain, read again one by one: group 2 its content. */
const PART = new RegExp(String.raw`\+?[ \t]{0,16}(?:(?:\r?\n|\\n)[ \t]{0,64})?(["'\x60])([^"'\x60\\\n]{1,${MAX_PART_CHARS}})\1`, "y");

/** `spans` is the engine's own reading of a text: the secret spans every rule finds in it. */
export function concatenatedRules(spans: (text: string) => readonly number[]): readonly Rule[] {
  const pattern = new RegExp(String.raw`${LITERAL}(?:${NEXT}){1,${MAX_PARTS - 1}}`, "g");
  return [
    {
      name: "concatenated-literals",
      needles: ['" +', '"+', "' +", "'+", "` +", "`+", '" "', "' '", `" '`, `' "`, '"\n', "'\n"],
      pattern,
      findings: (match) => {
        const parts: JoinedPart[] = [];
        for (let at = 0; at < match[0].length; ) {
          PART.lastIndex = at;
          const part = PART.exec(match[0]);
          if (part === null) break;
          const content = part[2]!;
          parts.push({ at: PART.lastIndex - 1 - content.length, text: content });
          at = PART.lastIndex;
          // `+` and whitespace come before the next literal.
          while (at < match[0].length && /[ \t]/.test(match[0][at]!)) at++;
        }
        const joined = parts.map((part) => part.text).join("");
        // Reading the joined text runs this rule's pattern from the start again: put back where the outer scan stands.
        const resume = pattern.lastIndex;
        let found: readonly number[];
        try {
          found = spans(joined);
        } finally {
          pattern.lastIndex = resume;
        }
        return findingsInParts(parts, found, "");
      },
    },
  ];
}
