/**
 * `npm run test:large` (not in `npm test`): a child that writes a file whose git binary patch is
 * longer than a JavaScript string may be. It writes 420 MB of random bytes and applies them, about
 * 1.3 GB of disk and 40 s, too much for every run of the suite.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { applyChanges } from "../../src/isolation/apply.ts";
import { readChangeRecord } from "../../src/isolation/change-record.ts";
import { finishIsolation, isolationWorktree, startIsolation } from "../../src/isolation/child-isolation.ts";
import { openRepository } from "../../src/isolation/repository.ts";
import type { RunFiles } from "../../src/runs/index.ts";
import { makeRepo, writeIn } from "../support/git-repo.ts";

const home = realpathSync(mkdtempSync(join(tmpdir(), "pi-flow-home-")));
const runId = () => "r-large0001";

describe("a child that writes a huge binary file", () => {
  it("keeps its changes applicable when their patch is too large to show", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const runDir = realpathSync(mkdtempSync(join(tmpdir(), "pi-flow-run-")));
    const files = { changes: join(runDir, "changes.json"), patch: join(runDir, "patch.diff") } as RunFiles;
    const pending = startIsolation(await openRepository(root), runId(), home);
    const worktree = await isolationWorktree(pending);
    // Random bytes do not compress: its git binary patch is longer than a JavaScript string may be.
    writeFileSync(join(worktree.path, "big.bin"), randomBytes(420 * 1024 * 1024));
    writeIn(worktree.path, { "a.txt": "the child's\n" });
    const diagnostics: string[] = [];
    const stats = await finishIsolation(pending, files, home, { appendDiagnostic: (entry) => diagnostics.push(entry.message) });
    expect(diagnostics).toEqual([]);
    expect(stats).toEqual({ files: 2, insertions: 1, deletions: 1 });
    expect(readChangeRecord(files)?.state).toBe("kept");
    expect(readFileSync(files.patch, "utf8")).toContain("too large");
    const applied = await applyChanges(await openRepository(root), pending.runId);
    expect(applied).toEqual({ status: "applied", files: ["a.txt", "big.bin"] });
    expect(statSync(join(root, "big.bin")).size).toBe(420 * 1024 * 1024);
    // A gigabyte of disk between the objects, the worktree and the applied file.
    for (const dir of [root, home, runDir]) rmSync(dir, { recursive: true, force: true });
  }, 300_000);
});
