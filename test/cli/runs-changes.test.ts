// What `flow runs` and `flow runs show` say of a worktree run's kept changes: where a user looks
// first, an apply that did not finish is named, not only by apply itself. Real git, real run store.
import { afterAll, expect, test } from "vitest";
import { readChangeRecord } from "../../src/isolation/change-record.ts";
import { markApplying } from "../../src/isolation/unfinished-apply.ts";
import { openRunStore, RunRegistry, runFiles } from "../../src/runs/index.ts";
import { gitIn, makeRepo } from "../support/git-repo.ts";
import { keptRun } from "../support/kept-run.ts";
import { flowInProcess } from "./in-process.ts";
import { flowSandbox } from "./support.ts";

const sandbox = flowSandbox();
afterAll(() => sandbox.dispose());

test("an apply that did not finish shows in flow runs and flow runs show, with what to do; kept and applied changes show in show", async () => {
  const root = makeRepo({ "a.txt": "a\n", "b.txt": "b\n" });
  const store = openRunStore({ home: sandbox.flowHome, cwd: root, sessionId: "s", registry: new RunRegistry() });
  const kept = await keptRun(store, root, { "a.txt": "child a\n" });
  const broken = await keptRun(store, root, { "a.txt": "child a\n", "b.txt": "child b\n" });
  // An apply killed after it marked the run, as apply marks it before writing the first file.
  const files = runFiles(store.scope, broken);
  await markApplying(root, files, readChangeRecord(files)!, broken, ["a.txt", "b.txt"], gitIn(root, "rev-parse", `refs/pi-flow/${broken}^1`));

  const listed = await flowInProcess(["runs", "--cwd", root], { env: sandbox.env });
  const row = (runId: string) => listed.stdout.split("\n").find((line) => line.startsWith(runId));
  expect(row(broken)).toMatch(/ agent\s+succeeded, apply unfinished\s+\d{4}-/);
  expect(row(kept)).toMatch(/ agent\s+succeeded\s+\d{4}-/);

  const shown = await flowInProcess(["runs", "show", broken, "--cwd", root], { env: sandbox.env });
  expect(shown.code).toBe(0);
  expect(shown.stdout).toContain(
    `\n  changes: 2 file(s), +2 -2; its previous apply did not finish: the working tree may hold some of them and not others: a.txt, b.txt. flow runs apply ${broken} finishes it when none of them changed since (or names those that did, and how to put a file back); flow runs discard ${broken} keeps the tree as it is.\n`,
  );
  const keptShown = await flowInProcess(["runs", "show", kept, "--cwd", root], { env: sandbox.env });
  expect(keptShown.stdout).toContain(`\n  changes: 1 file(s), +1 -1; kept, not applied: flow runs apply ${kept} merges them into the working tree.\n`);
  expect((await flowInProcess(["runs", "apply", kept, "--cwd", root], { env: sandbox.env })).code).toBe(0);
  const appliedShown = await flowInProcess(["runs", "show", kept, "--cwd", root], { env: sandbox.env });
  expect(appliedShown.stdout).toContain("\n  changes: 1 file(s), +1 -1; applied.\n");
});

test("flow runs show names a run's kept files to review (an .envrc direnv would run) before it is applied", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  const store = openRunStore({ home: sandbox.flowHome, cwd: root, sessionId: "s", registry: new RunRegistry() });
  const kept = await keptRun(store, root, { ".envrc": "export PATH=$PWD/bin:$PATH\n" });
  const shown = await flowInProcess(["runs", "show", kept, "--cwd", root], { env: sandbox.env });
  expect(shown.code).toBe(0);
  expect(shown.stdout).toContain(`\n  REVIEW run ${kept}'s file before running anything in the project: .envrc (direnv runs it when you enter its folder).\n`);
});
