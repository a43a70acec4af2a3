// A project's role profiles come from its repository, which may not be the user's: a FIFO or a
// huge file there is refused as configuration_invalid, and never holds the session.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { FlowError } from "../../src/contract/errors.ts";
import { findProfileFile, parseProfileFile } from "../../src/harnesses/profiles.ts";

const dir = mkdtempSync(join(tmpdir(), "pi-flow-profile-files-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const refusal = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return error instanceof FlowError ? { code: error.code, message: error.message } : error;
  }
  return undefined;
};

test("a profile that is a FIFO is configuration_invalid at once, and a lookup by name passes over it", () => {
  execFileSync("mkfifo", [join(dir, "pipe.md")]);
  writeFileSync(join(dir, "reviewer.md"), "---\nname: critic\n---\nReview carefully.");
  // No writer ever opens the FIFO: a blocking read would never return.
  expect(refusal(() => parseProfileFile(join(dir, "pipe.md"), "project"))).toEqual({
    code: "configuration_invalid",
    message: `pipe.md: The profile ${join(dir, "pipe.md")} is a FIFO: give a regular file.`,
  });
  expect(findProfileFile(dir, "critic")).toBe(join(dir, "reviewer.md"));
});

test("a profile over 1 MiB is configuration_invalid, not read whole", () => {
  writeFileSync(join(dir, "huge.md"), "---\nname: huge\n---\n");
  truncateSync(join(dir, "huge.md"), 64 * 1024 * 1024); // sparse: costs no disk
  expect(refusal(() => parseProfileFile(join(dir, "huge.md"), "project"))).toMatchObject({
    code: "configuration_invalid",
    message: expect.stringMatching(/is over 1 MiB/),
  });
});
