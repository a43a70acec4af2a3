import { describe, expect, it } from "vitest";
import { redactedJson, redactText, redactValueUnder } from "../../src/runs/index.ts";
import { rulePatternRuns } from "../../src/runs/redact/engine.ts";

/**
 * The work redaction does on a value of many short strings (`store("k", [...])`, a tools.* answer
 * that lists 200,000 items): it runs on Pi's main thread, so each string's cost freezes Pi's UI.
 * Counted in rule runs, not time: a rule that cannot match a text (a 40-character key in
 * a 10-character item) is not run on it.
 */
const items = (tag: string): string[] => JSON.parse(JSON.stringify(Array.from({ length: 1000 }, (_, i) => `item ${tag}${i}`))) as string[];

describe("redacting many short strings", () => {
  it("runs no rule on an item that cannot hold its match", () => {
    const before = rulePatternRuns();
    redactedJson(items("kept-"));
    redactValueUnder("k", items("store-"));
    // Each item is read once, and holds no needle, no token head, and no text long enough for the
    // rules that run on every text: only pgpass (`host:port:db:user:password`, 9 characters) may run.
    expect(rulePatternRuns() - before).toBeLessThanOrEqual(2000);
  });

  it("still redacts a secret among them", () => {
    const list = items("secret-");
    list[500] = "AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
    expect(redactedJson(list)).not.toContain("wJalrXUtnFEMI");
  });

  it("does not push the texts that repeat out of memory", () => {
    // A long text every child's session holds (a system prompt section): redacted once, then remembered.
    const section = (): string => `${"Use the bash tool with care; never print a password or a token.\n".repeat(64)}`.trim();
    redactText(section());
    const before = rulePatternRuns();
    redactedJson(items("flood-").concat(items("flood2-"), items("flood3-"), items("flood4-"), items("flood5-")));
    const between = rulePatternRuns();
    redactText(section());
    expect(rulePatternRuns() - between).toBe(0);
    expect(between - before).toBeGreaterThan(0);
  });

  it("reads a store line's items once", () => {
    // More items than redaction remembers, so the journal line cannot find them remembered.
    const list = Array.from({ length: 5 }, (_, i) => items(`line${i}-`)).flat();
    const before = rulePatternRuns();
    const line = redactedJson({ t: "store", key: "k", value: redactValueUnder("k", list) });
    expect(rulePatternRuns() - before).toBeLessThanOrEqual(list.length + 20); // and the line's own few fields
    expect(line).toContain('"item line4-999"');
  });

  it("keeps a store line's secrets out", () => {
    const list = items("stored-");
    list[7] = "ghp_0123456789abcdefABCDEF0123456789abcd";
    const value = redactValueUnder("k", list) as string[];
    expect(value[7]).toBe("[REDACTED]");
    expect(Object.isFrozen(value)).toBe(true);
    expect(redactedJson({ t: "store", key: "k", value })).not.toContain("ghp_");
  });
});
