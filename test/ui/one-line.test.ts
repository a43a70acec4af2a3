import { expect, test } from "vitest";
import { oneLine } from "../../src/ui/format.ts";

test("oneLine folds separators to single spaces and drops escape sequences and hidden controls whole", () => {
  expect(oneLine("a\tb\nc\r\nd\ve\ff\u001cg\u0085h")).toBe("a b c d e f g h");
  expect(oneLine("  ok\u001b[2K\u001b]0;pwned\u0007 FAKE\u202e: all good  ")).toBe("ok FAKE: all good");
});
