/**
 * Worktree isolation against bare git, side by side on one repository of 10,000 files.
 *
 *   npx node bench/worktree.ts              # 10,000 files, 5 samples each, alternating
 *   BENCH_SCALE=0.1 npx node bench/worktree.ts
 *
 * pi-flow: a worktree child's whole isolation, created and removed: the snapshot of the tree the
 * user sees (private index, add -A, write-tree, commit-tree), the serialized `git worktree add`,
 * then keeping its (empty) changes and removing the worktree. Bare: `git worktree add --detach` of
 * HEAD + `git worktree remove` of the same tree. Target ≤ 1.2x (issue 24). Medians; no assertion.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openRepository } from "../src/isolation/repository.ts";
import { createIsolation, settleIsolation } from "../src/isolation/worktree.ts";
import { JSON_OUT, RatioTable } from "./support.ts";

const SCALE = Number(process.env.BENCH_SCALE ?? "1");
const FILES = Math.round(10_000 * SCALE);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? "5");
const ENV = { ...process.env, GIT_AUTHOR_NAME: "b", GIT_AUTHOR_EMAIL: "b@b", GIT_COMMITTER_NAME: "b", GIT_COMMITTER_EMAIL: "b@b" };
const git = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, env: ENV, encoding: "utf8" });

function makeRepo(): string {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "pi-flow-bench-wt-")));
  git(root, "init", "-q");
  for (let i = 0; i < FILES; i++) {
    const dir = join(root, `d${i % 100}`);
    if (i < 100) mkdirSync(dir);
    writeFileSync(join(dir, `f${i}.txt`), `file ${i}\n`.repeat(8));
  }
  git(root, "add", "-A");
  git(root, "commit", "-q", "-m", "fixture");
  return root;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const root = makeRepo();
const home = realpathSync(mkdtempSync(join(tmpdir(), "pi-flow-bench-home-")));
const repo = await openRepository(root);
const flow: number[] = [];
const bare: number[] = [];
try {
  for (let sample = 0; sample < SAMPLES; sample++) {
    let start = performance.now();
    const isolation = await createIsolation(repo, `ag_bench${String(sample).padStart(12, "0")}`, home);
    await settleIsolation(isolation, home);
    flow.push(performance.now() - start);

    const path = join(home, `bare-${sample}`);
    start = performance.now();
    git(root, "worktree", "add", "-q", "--detach", path, "HEAD");
    git(root, "worktree", "remove", "--force", path);
    bare.push(performance.now() - start);
  }
  const table = new RatioTable("pi-flow", 64);
  table.row(`worktree child isolation, ${FILES} files (create + remove)`, median(flow), median(bare), 1.2);
  if (JSON_OUT) console.log(JSON.stringify({ files: FILES, samples: SAMPLES, rows: table.rows }, null, 2));
} finally {
  rmSync(root, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
}
