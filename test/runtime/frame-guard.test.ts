import { describe, expect, it } from "vitest";
import { guardedCacheChars, guardFrames } from "../../runtime/frame-guard.ts";
import { takeSyntaxTree } from "../../runtime/parse.ts";
import { parseWorkflow } from "../../runtime/index.ts";

describe("the frame guard's input", () => {
  it("guards a parsed workflow's body from the tree parseWorkflow read, exactly as from parsing the body again", () => {
    const sources = [
      'export const apiVersion = 1;\nexport const meta = { name: "t" };\nexport default async function ({ args }) { const f = () => { return 1; }; return f(); }\nclass C { static { let a = 1; } m() { return 2; } }',
      "function a() { var x; function x() {} return 1; }\nconst b = async function* () { yield 1; };\nreturn [a(), (() => { return 2; })()];",
    ];
    for (const source of sources) {
      const parsed = parseWorkflow(source, { origin: "inline" });
      const tree = takeSyntaxTree(parsed);
      expect(tree).toBeDefined();
      // Taken once: a second run finds the guarded body in the cache instead.
      expect(takeSyntaxTree(parsed)).toBeUndefined();
      const fromTree = guardFrames(parsed.body, tree);
      // The same body and a trailing newline: a cache miss, so parsed anew.
      const reparsed = guardFrames(`${parsed.body}\n`);
      expect(`${fromTree.code}\n`).toBe(reparsed.code);
      expect(fromTree.shifts).toEqual(reparsed.shifts);
      expect(fromTree.code).toContain("try{");
    }
    // A body changed after parsing is not described by the tree any more: it is parsed again.
    const changed = parseWorkflow("return 1;", { origin: "inline" });
    changed.body = "function f() { return 2; }\nreturn f();";
    expect(takeSyntaxTree(changed)).toBeUndefined();
  });

  it("keeps at most 4 MiB of characters of guarded bodies, however large the scripts", () => {
    const big = (n: number) => `${"// filler\n".repeat(60_000)}function f${n}() { return ${n}; }\nreturn f${n}();`;
    for (let n = 0; n < 12; n++) expect(guardFrames(big(n)).code).toContain("try{");
    expect(guardedCacheChars()).toBeLessThanOrEqual(4 * 1024 * 1024);
    expect(guardedCacheChars()).toBeGreaterThan(0);
  });
});
