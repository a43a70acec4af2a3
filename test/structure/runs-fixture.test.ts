// The runs tests make their sandbox one way, test/runs/helpers.ts's sandboxPerTest or
// sandboxPerFile: a sandbox bracketed by hand is left behind when its test fails before cleanup.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { PROJECT_ROOT } from "../support/pi-session.ts";

it("no runs test makes or removes its sandbox by hand", () => {
  const dir = join(PROJECT_ROOT, "test/runs");
  const tests = readdirSync(dir).filter((name) => name.endsWith(".test.ts"));
  expect(tests.length).toBeGreaterThan(0);
  const byHand = tests.filter((name) => /\bsandbox\(\)|\.cleanup\(\)/.test(readFileSync(join(dir, name), "utf8")));
  expect(byHand).toEqual([]);
});
