import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { once } from "node:events";
import { expect, test } from "vitest";
import { cleanupIsolation } from "../../src/isolation/cleanup.ts";
import { createIsolation, ownerFile, settleIsolation, worktreesDir } from "../../src/isolation/worktree.ts";
import { openRepository } from "../../src/isolation/repository.ts";
import { gitIn, makeRepo, worktreeCount } from "../support/git-repo.ts";
import { PROJECT_ROOT, startPiSession } from "../support/pi-session.ts";

/** A host process that makes a worktree for a child, says so, then waits to be killed. */
const HOST = `
  const { createIsolation } = await import(${JSON.stringify(join(PROJECT_ROOT, "src/isolation/worktree.ts"))});
  const { openRepository } = await import(${JSON.stringify(join(PROJECT_ROOT, "src/isolation/repository.ts"))});
  const made = await createIsolation(await openRepository(process.argv[1]), "ag_crashed0000000000", process.argv[2]);
  console.log(made.path);
  setInterval(() => {}, 1 << 30);
`;

test("a host SIGKILLed mid-child leaves a worktree that the next session start removes; a live one's is left alone", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  const home = realpathSync(mkdtempSync(join(tmpdir(), "pi-flow-home-")));
  const host = spawn(process.execPath, ["--input-type=module", "-e", HOST, root, home], { stdio: ["ignore", "pipe", "inherit"] });
  const [line] = (await once(host.stdout!, "data")) as [Buffer];
  const left = line.toString().trim();
  host.kill("SIGKILL");
  await once(host, "exit");

  const live = await createIsolation(await openRepository(root), "ag_live000000000000", home); // this process: alive
  gitIn(root, "update-ref", "refs/pi-flow/ag_pruned00000000000", "HEAD"); // a kept ref whose run was pruned
  expect(worktreeCount(root)).toBe(3);

  // The next session started in that repository cleans up, off its start-up path: wait until it has.
  const pi = await startPiSession({ cwd: root, env: { PI_FLOW_HOME: home } });
  try {
    const prunedRunRefKept = () => gitIn(root, "for-each-ref", "refs/pi-flow/ag_pruned00000000000") !== "";
    while (existsSync(left) || existsSync(`${left}.owner.json`) || worktreeCount(root) !== 2 || prunedRunRefKept()) await new Promise((resolve) => setTimeout(resolve, 20));
  } finally {
    await pi.dispose();
  }
  expect(gitIn(root, "worktree", "list", "--porcelain")).not.toContain(left);
  expect(existsSync(live.path)).toBe(true);
  expect(worktreeCount(root)).toBe(2);
  await settleIsolation(live, home);
  expect(worktreeCount(root)).toBe(1);
});

test("a worktree whose host died before a restart is removed, though a live process has the host's process ID since", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  const home = realpathSync(mkdtempSync(join(tmpdir(), "pi-flow-home-")));
  const left = await createIsolation(await openRepository(root), "ag_0mx1xga91_beforeboot", home);
  const reused = spawn(process.execPath, ["-e", "setInterval(() => {}, 1 << 30)"], { stdio: "ignore" });
  await once(reused, "spawn");
  try {
    const owner = ownerFile(worktreesDir(home, root), left.runId);
    const written = JSON.parse(readFileSync(owner, "utf8")) as Record<string, unknown>;
    writeFileSync(owner, JSON.stringify({ ...written, pid: reused.pid, boot: "the boot before the restart" }));
    expect(await cleanupIsolation(home, root)).toEqual({ removedWorktrees: [left.runId], droppedRefs: [] });
    expect(existsSync(left.path)).toBe(false);
    expect(worktreeCount(root)).toBe(1);
  } finally {
    reused.kill("SIGKILL");
  }
});

test("an owner file whose name names no worktree (.owner.json, ..owner.json) never makes cleanup remove the folder of every worktree", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  const home = realpathSync(mkdtempSync(join(tmpdir(), "pi-flow-home-")));
  const live = await createIsolation(await openRepository(root), "ag_live000000000000", home);
  const dir = worktreesDir(home, root);
  const gone = JSON.stringify({ pid: process.pid + 1, host: hostname(), boot: "the boot before the restart" });
  for (const name of [".owner.json", "..owner.json"]) writeFileSync(join(dir, name), gone);
  expect(await cleanupIsolation(home, root)).toEqual({ removedWorktrees: [], droppedRefs: [] });
  expect(existsSync(live.path)).toBe(true);
  expect(worktreeCount(root)).toBe(2);
  await settleIsolation(live, home);
});
