// docs/observability.md's synopsis of the two ways to write a report is the commands' own usage:
// a flag or argument the commands change must change the page too.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, test } from "vitest";
import { RUNS_USAGE } from "../../src/command-line/usage.ts";
import { FLOW_USAGE } from "../../src/commands/flow-command.ts";
import { PROJECT_ROOT } from "../support/pi-session.ts";

test("the run report's synopsis in docs/observability.md is flow's and /flow's usage, as written", () => {
  const page = readFileSync(join(PROJECT_ROOT, "docs", "observability.md"), "utf8");
  const block = /## The run report\n\n```text\n([\s\S]*?)```/.exec(page)?.[1] ?? "";
  const commands = block
    .split("\n")
    .map((line) => line.replace(/\s+#.*$/, "").trim())
    .filter((line) => line !== "");
  expect(commands).toEqual(["flow runs report <runId> [--out FILE] [--cwd DIR]", "/flow report <runId> [FILE]"]);
  expect(RUNS_USAGE.split("\n").map((line) => line.trim())).toContain(commands[0]);
  expect(FLOW_USAGE.some((line) => line.startsWith(`${commands[1]!} `))).toBe(true);
});
