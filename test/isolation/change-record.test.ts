import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, test } from "vitest";
import { readChangeRecord, writeChangeRecord } from "../../src/isolation/change-record.ts";
import { assertChangesReadable } from "../../src/isolation/readable-changes.ts";

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

test("why a child's changes could not be kept is kept redacted, and apply's run_unavailable repeats it redacted", async () => {
  dir = mkdtempSync(join(tmpdir(), "pi-flow-change-record-"));
  const files = { changes: join(dir, "changes.json") };
  const token = "ghp_R8mQ2vX9kLp4Tz7Wn3Yc6Hb1Jd5Fs0Ga2Ke8";
  const reason = `git push failed: remote https://x-access-token:${token}@github.com/acme/app.git rejected it`;
  await writeChangeRecord(files, { files: 0, insertions: 0, deletions: 0, state: "unavailable", root: dir, reason });
  expect(readFileSync(files.changes, "utf8")).not.toContain(token);
  const refused = assertChangesReadable("ag_0000000001_0000000001", readChangeRecord(files));
  await expect(refused).rejects.toThrow(expect.objectContaining({ code: "run_unavailable", message: expect.stringContaining("git push failed") }));
  await expect(assertChangesReadable("ag_0000000001_0000000001", readChangeRecord(files))).rejects.toThrow(expect.objectContaining({ message: expect.not.stringContaining(token) }));
});
