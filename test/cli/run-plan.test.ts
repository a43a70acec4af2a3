import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { planRun } from "../../src/command-line/run-plan.ts";
import { flowSandbox } from "./support.ts";

/**
 * `flow run`'s flags, checked in-process: an inline `--args` over 1 MiB cannot even reach a new
 * process (Linux refuses one argument over 128 KiB), but a shell function or a program that calls
 * flow's main can hand it over.
 */
const sandbox = flowSandbox();
afterAll(() => sandbox.dispose());
const script = sandbox.file("one.js", 'export const apiVersion = 1;\nexport const meta = { description: "One" };\nreturn args;\n');

test("an inline --args over 1 MiB is refused as request_invalid before Pi starts; 1 MiB itself is taken", () => {
  const padding = (bytes: number) => JSON.stringify({ text: "x".repeat(bytes - 11) });
  expect(padding(1024 * 1024)).toHaveLength(1024 * 1024);
  expect(() => planRun([script, "--args", padding(1024 * 1024 + 1)])).toThrow(
    expect.objectContaining({ code: "request_invalid", message: "--args is over 1 MiB (1048576 bytes), the most a workflow's args may hold." }),
  );
  expect(planRun([script, "--args", padding(1024 * 1024)]).args).toEqual({ text: "x".repeat(1024 * 1024 - 11) });
});

test("an --args file over 1 MiB is refused by its read, naming the file", () => {
  const file = join(sandbox.root, "big-args.json");
  writeFileSync(file, JSON.stringify({ text: "x".repeat(1024 * 1024) }));
  expect(() => planRun([script, "--args", `@${file}`])).toThrow(
    expect.objectContaining({ code: "request_invalid", message: `The --args file ${file} is over 1 MiB (1048576 bytes), the most it may hold.` }),
  );
});
