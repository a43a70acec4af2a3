import { describe, expect, it } from "vitest";
import { ALL_RULES } from "../../src/runs/redact/engine.ts";
import { RAW_QUOTING } from "../../src/runs/redact/rule.ts";
import { buildInnocentCases } from "./fixtures/innocent-corpus.ts";
import { buildSecretCases } from "./fixtures/secret-corpus.ts";

/**
 * A rule runs only on a text holding one of its needles (engine.ts): a needle a rule's secrets can
 * do without would let those secrets through unseen. Every text of both corpora, as written and in
 * other cases, is read by every rule alone, and each one that finds a secret must have a needle there.
 */
const finds = (pattern: RegExp, secretOf: (match: RegExpExecArray) => boolean, text: string): boolean => {
  pattern.lastIndex = 0;
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    if (match[0].length === 0) pattern.lastIndex++;
    else if (secretOf(match)) return true;
  }
  return false;
};

describe("the rules' needles", () => {
  it("are in every text a rule finds a secret in, in any case", () => {
    const texts = [...buildSecretCases(), ...buildInnocentCases()].flatMap(({ text }) => [text, text.toUpperCase(), text.toLowerCase()]);
    const missing: string[] = [];
    for (const rule of ALL_RULES) {
      const needles = rule.needles?.map((needle) => needle.toLowerCase());
      if (needles === undefined) continue;
      const secretOf = (match: RegExpExecArray): boolean => {
        if (rule.findings) return rule.findings(match, RAW_QUOTING).some(({ start, end }) => end > start);
        const span = rule.secret ? rule.secret(match, RAW_QUOTING) : [0, match[0].length];
        return span !== null && span[1] > span[0];
      };
      for (const text of texts) {
        if (finds(rule.pattern, secretOf, text) && !needles.some((needle) => text.toLowerCase().includes(needle))) missing.push(`${rule.name}: ${text.slice(0, 120)}`);
      }
      rule.scanned?.();
    }
    expect(missing).toEqual([]);
  });
});

/**
 * A rule with `minChars` is not run on a shorter text (engine.ts): every secret a rule finds in the
 * corpora, cut out with what its match and lookbehind read, is at least that long.
 */
describe("the rules' shortest texts", () => {
  it("hold every secret a rule finds", () => {
    const texts = buildSecretCases().map(({ text }) => text);
    const tooShort: string[] = [];
    const found = new Map<string, number>();
    for (const rule of ALL_RULES) {
      if (rule.minChars === undefined) continue;
      for (const text of texts) {
        rule.pattern.lastIndex = 0;
        for (let match = rule.pattern.exec(text); match !== null; match = rule.pattern.exec(text)) {
          if (match[0].length === 0) rule.pattern.lastIndex++;
          const span = rule.secret ? rule.secret(match, RAW_QUOTING) : [0, match[0].length];
          if (span === null || span[1] <= span[0]) continue;
          const region = text.slice(match.index + Math.min(0, span[0]), match.index + Math.max(match[0].length, span[1]));
          found.set(rule.name, (found.get(rule.name) ?? 0) + 1);
          if (region.length < rule.minChars) tooShort.push(`${rule.name}: ${region}`);
        }
      }
      rule.scanned?.();
    }
    expect(tooShort).toEqual([]);
    // Each such rule is pinned by the corpus, or the check above would hold of nothing.
    expect([...found.keys()].sort()).toEqual(ALL_RULES.filter((rule) => rule.minChars !== undefined).map((rule) => rule.name).sort());
  });
});
