import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect, test } from "vitest";
import { filesOfPatch } from "../../src/commands/changes.ts";
import { formatChangeAnswers } from "../../src/isolation/apply-runs.ts";
import { patchText, readChanges } from "../../src/isolation/changes.ts";
import { applyChanges } from "../../src/isolation/apply.ts";
import { openRepository } from "../../src/isolation/repository.ts";
import { createIsolation, settleIsolation } from "../../src/isolation/worktree.ts";
import { makeRepo } from "../support/git-repo.ts";

const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202e]/;

test("file names a child chose are shown without their escapes, and the confirmation lists every one of them", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  const home = realpathSync(root);
  const isolation = await createIsolation(await openRepository(root), "r-names00000", join(home, ".flow-home"));
  const hostile = "\u001b]52;c;cm0gLXJmIH4K\u0007\u001b]0;owned\u0007\u009b2K\rREADME\u202e.md";
  writeFileSync(join(isolation.path, hostile), "x\n");
  mkdirSync(join(isolation.path, "docs"));
  writeFileSync(join(isolation.path, "docs", "notes \"quoted\" é 🎉.txt"), "y\n");
  await settleIsolation(isolation, join(home, ".flow-home"));
  const kept = await readChanges(root, isolation.runId);
  const listed = filesOfPatch(await patchText(root, kept!.base, kept!.commit));
  // Both files, the quoted ones read back from git's quotes, none with a control character left.
  expect(listed).toHaveLength(2);
  expect(listed).toContain('docs/notes "quoted" é 🎉.txt');
  expect(listed.some((name) => name.startsWith("README") || name.endsWith("README.md"))).toBe(true);
  for (const name of listed) expect(name).not.toMatch(CONTROL);

  const applied = await applyChanges(await openRepository(root), isolation.runId);
  const line = formatChangeAnswers([{ runId: isolation.runId, status: "applied", files: applied.status === "applied" ? applied.files : [] }]);
  expect(line).toContain("README");
  expect(line).not.toMatch(CONTROL);
});
