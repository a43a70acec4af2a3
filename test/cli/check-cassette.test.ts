import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { checkCassettes } from "../../src/command-line/check-cassette.ts";

const dir = mkdtempSync(join(tmpdir(), "pi-flow-check-cassette-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const handWritten = join(dir, "hand.jsonl");
writeFileSync(
  handWritten,
  ['{"format":"pi-flow-cassette","version":1}', '{"key":{"agent":"role:reviewer","description":"Review"},"answer":"ok"}', ""].join("\n"),
);
const recorded = join(dir, "recorded.jsonl");
writeFileSync(
  recorded,
  ['{"format":"pi-flow-cassette","version":1}', '{"key":{"agent":"role:reviewer","description":"Review","occurrence":1,"promptHash":"sha256:0123456789abcdef"},"answer":"ok","source":"model"}'].join("\n"),
);

test("a hand-written cassette is fine loose, with a note saying so; strict names each entry that has no promptHash", () => {
  expect(checkCassettes([handWritten], "loose")).toEqual({ problems: [], notes: [`${handWritten}: 1 entry; 1 without promptHash, so replay it with --replay-mode loose`] });
  expect(checkCassettes([handWritten], "strict")).toEqual({
    problems: [`${handWritten}:2: key.promptHash is needed in strict replay (a hand-written entry: replay with --replay-mode loose)`],
    notes: [],
  });
  expect(checkCassettes([recorded], "strict")).toEqual({ problems: [], notes: [`${recorded}: 1 entry, replayable strict or loose`] });
});

test("a file that cannot be read is a problem of its own, and the other files are still checked", () => {
  const report = checkCassettes([join(dir, "absent.jsonl"), recorded], "loose");
  expect(report.problems).toEqual([expect.stringMatching(/absent\.jsonl:1: The cassette .*absent\.jsonl does not exist \(ENOENT\)/)]);
  expect(report.notes).toHaveLength(1);
});
