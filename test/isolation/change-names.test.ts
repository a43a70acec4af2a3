import { mkdirSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect, test } from "vitest";
import { changeRuns, formatChangeAnswers, keptChangeFiles } from "../../src/isolation/apply-runs.ts";
import { applyChanges } from "../../src/isolation/apply.ts";
import { writeChangeRecord } from "../../src/isolation/change-record.ts";
import { openRepository } from "../../src/isolation/repository.ts";
import { createIsolation, settleIsolation } from "../../src/isolation/worktree.ts";
import { openRunStore, RunRegistry, runFiles } from "../../src/runs/index.ts";
import { makeRepo } from "../support/git-repo.ts";

const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202e]/;

test("the files a run changes are listed as git names them, every one and without their escapes, before and after apply", async () => {
  const root = makeRepo({ "a.txt": "a\n", "plain.txt": "p\n", "tab\there.txt": "t\n" });
  const home = join(root, ".flow-home");
  const store = openRunStore({ home, cwd: root, sessionId: "s", registry: new RunRegistry() });
  const run = store.create({ kind: "agent", task: { description: "names" }, background: false });
  const isolation = await createIsolation(await openRepository(root), run.runId, home);
  // Names git quotes in a patch header (a control character, a quote, a tab), renames between a
  // quoted and a plain name, and a folder whose name holds " b/".
  const hostile = "\u001b]52;c;cm0gLXJmIH4K\u0007\u009b2K\rREADME\u202e.md";
  writeFileSync(join(isolation.path, hostile), "x\n");
  renameSync(join(isolation.path, "plain.txt"), join(isolation.path, 'ren"amed.txt'));
  renameSync(join(isolation.path, "tab\there.txt"), join(isolation.path, "untabbed.txt"));
  mkdirSync(join(isolation.path, "x b"));
  writeFileSync(join(isolation.path, "x b", "README.md"), "y\n");
  const stats = await settleIsolation(isolation, home);
  await writeChangeRecord(runFiles(store.scope, run.runId), { state: "kept", root, ...stats! });
  run.settle({ outcome: "succeeded", value: "done" });

  const listed = await keptChangeFiles(store, run.runId);
  expect(listed).toHaveLength(6);
  expect(listed).toEqual(expect.arrayContaining(["plain.txt", 'ren"amed.txt', "tab<U+0009>here.txt", "untabbed.txt", "x b/README.md"]));
  expect(listed).toContain("<U+001B>]52;c;cm0gLXJmIH4K<U+0007><U+009B>2K<U+000D>README<U+202E>.md");
  for (const name of listed) expect(name).not.toMatch(CONTROL);

  const applied = await applyChanges(await openRepository(root), run.runId);
  const line = formatChangeAnswers([{ runId: run.runId, status: "applied", files: applied.status === "applied" ? applied.files : [] }], "apply");
  expect(line).toContain("README");
  expect(line).toContain("x b/README.md");
  expect(line).not.toMatch(CONTROL);
});

test("a run with no kept changes says there is nothing to do in the words of the action asked", () => {
  const none = [{ runId: "ag_0mx1xga91_abcdefghij", status: "nothing_to_apply" as const }];
  expect(formatChangeAnswers(none, "apply")).toBe("Run ag_0mx1xga91_abcdefghij: nothing to apply (no changes kept).");
  expect(formatChangeAnswers(none, "discard")).toBe("Run ag_0mx1xga91_abcdefghij: nothing to discard (no changes kept).");
});

test("a link the child made that points out of the working tree is shown as one, with where it points, before apply asks", async () => {
  const root = makeRepo({ "a.txt": "a\n", "docs/x.md": "x\n" });
  const home = join(root, ".flow-home");
  const store = openRunStore({ home, cwd: root, sessionId: "s", registry: new RunRegistry() });
  const run = store.create({ kind: "agent", task: { description: "links" }, background: false });
  const isolation = await createIsolation(await openRepository(root), run.runId, home);
  symlinkSync("/home/user/.ssh/authorized_keys", join(isolation.path, "notes.md"));
  symlinkSync("../../outside\u001b[2J", join(isolation.path, "docs", "up.md"));
  symlinkSync("x.md", join(isolation.path, "docs", "same.md"));
  const stats = await settleIsolation(isolation, home);
  await writeChangeRecord(runFiles(store.scope, run.runId), { state: "kept", root, ...stats! });
  run.settle({ outcome: "succeeded", value: "done" });
  expect((await keptChangeFiles(store, run.runId)).sort()).toEqual([
    "docs/same.md",
    "docs/up.md (a link to ../../outside<U+001B>[2J, out of the working tree)",
    "notes.md (a link to /home/user/.ssh/authorized_keys, out of the working tree)",
  ]);
});

test("a name that would read as another file's (a bidirectional override, a zero-width or blank character) is shown with those characters as code points, in the list and in apply's answer", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  const home = join(root, ".flow-home");
  const store = openRunStore({ home, cwd: root, sessionId: "s", registry: new RunRegistry() });
  const run = store.create({ kind: "agent", task: { description: "look-alike names" }, background: false });
  const isolation = await createIsolation(await openRepository(root), run.runId, home);
  // On a terminal the first reads as evilhs.txt, the others as a.txt, install.sh and b.txt.
  for (const name of ["evil\u202etxt.sh", "a\u2060.txt", "install\u00ad.sh", "b\u3164.txt", "c\u00a0d.txt"]) writeFileSync(join(isolation.path, name), "x\n");
  const stats = await settleIsolation(isolation, home);
  await writeChangeRecord(runFiles(store.scope, run.runId), { state: "kept", root, ...stats! });
  run.settle({ outcome: "succeeded", value: "done" });
  const shown = ["evil<U+202E>txt.sh", "a<U+2060>.txt", "install<U+00AD>.sh", "b<U+3164>.txt", "c<U+00A0>d.txt"];
  expect((await keptChangeFiles(store, run.runId)).sort()).toEqual([...shown].sort());
  const applied = await applyChanges(await openRepository(root), run.runId);
  const line = formatChangeAnswers([{ runId: run.runId, status: "applied", files: applied.status === "applied" ? applied.files : [] }], "apply");
  for (const name of shown) expect(line).toContain(name);
});

test("a link whose target holds a secret is named without it, in the list and in apply's answer and its data", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  const home = join(root, ".flow-home");
  const store = openRunStore({ home, cwd: root, sessionId: "s", registry: new RunRegistry() });
  const run = store.create({ kind: "agent", task: { description: "a link holding a token" }, background: false });
  const isolation = await createIsolation(await openRepository(root), run.runId, home);
  const token = `ghp_${"q9Zt4Lw8NcX2vB7mK3pL".repeat(2).slice(0, 36)}`;
  symlinkSync(`/tmp/${token}/cache`, join(isolation.path, "cache"));
  const stats = await settleIsolation(isolation, home);
  await writeChangeRecord(runFiles(store.scope, run.runId), { state: "kept", root, ...stats! });
  run.settle({ outcome: "succeeded", value: "done" });
  expect(await keptChangeFiles(store, run.runId)).toEqual(["cache (a link to /tmp/[REDACTED]/cache, out of the working tree)"]);
  const answers = await changeRuns(store, "apply", [run.runId]);
  expect(JSON.stringify(answers)).not.toContain(token.slice(4, 20));
  expect(answers[0]!.review).toEqual([{ path: "cache", why: "a link to /tmp/[REDACTED]/cache, out of the working tree" }]);
});
