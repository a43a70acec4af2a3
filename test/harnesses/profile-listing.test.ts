import fs, { mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, test, vi } from "vitest";
import { profileFiles } from "../../src/harnesses/profiles.ts";

const dir = mkdtempSync(join(tmpdir(), "pi-flow-profiles-"));
afterAll(() => {
  vi.restoreAllMocks();
  syncBuiltinESMExports();
  rmSync(dir, { recursive: true, force: true });
});

/** Sets the directory's time an hour back, as a directory nobody touched for a while. */
const age = () => utimesSync(dir, new Date(Date.now() - 3_600_000), new Date(Date.now() - 3_600_000));

test("a role directory that did not change is listed once for many children; a file added is found at the next lookup", () => {
  const readdir = vi.spyOn(fs, "readdirSync");
  syncBuiltinESMExports();
  writeFileSync(join(dir, "alpha.md"), "---\nname: alpha\n---\nprompt");
  age();
  for (let i = 0; i < 5; i++) expect([...profileFiles(dir).keys()]).toEqual(["alpha"]);
  expect(readdir.mock.calls.filter(([path]) => path === dir)).toHaveLength(1);

  // Just changed: read at every lookup until the change is a while old, so no change is missed.
  writeFileSync(join(dir, "beta.md"), "---\nname: beta\n---\nprompt");
  expect([...profileFiles(dir).keys()]).toEqual(["alpha", "beta"]);
  rmSync(join(dir, "alpha.md"));
  expect([...profileFiles(dir).keys()]).toEqual(["beta"]);
  expect(profileFiles(join(dir, "missing")).size).toBe(0);
});
