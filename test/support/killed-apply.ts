// An apply killed part-way, as a machine that went down would leave it: the user's own smudge filter
// (theirs to configure) stands for a slow disk on the files `attributes` names, saying it has begun
// and never finishing; the applier, in a process of its own, is then SIGKILLed with its git and filter.
import { execFileSync, spawn } from "node:child_process";
import { createReadStream, mkdtempSync } from "node:fs";
import { once } from "node:events";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeIn } from "./git-repo.ts";
import { PROJECT_ROOT } from "./pi-session.ts";

const APPLIER = `
  const { changeRuns } = await import(${JSON.stringify(join(PROJECT_ROOT, "src/isolation/apply-runs.ts"))});
  const { openRunStore } = await import(${JSON.stringify(join(PROJECT_ROOT, "src/runs/index.ts"))});
  const store = openRunStore({ home: process.argv[1], cwd: process.argv[2], sessionId: "s" });
  await changeRuns(store, "apply", [process.argv[3]]);
`;

export interface KilledApply {
  home: string;
  root: string;
  runId: string;
  /** The `.git/info/attributes` line that puts the slow filter on the files it names. */
  attributes: string;
  /** The test's own user git config (useOwnUserGitConfig). */
  userConfig: (...args: string[]) => void;
}

/** Applies `runId` in another process and SIGKILLs it once git begins writing a file the slow filter is on. */
export async function applyKilledWhileWriting({ home, root, runId, attributes, userConfig }: KilledApply): Promise<void> {
  const fifo = join(mkdtempSync(join(tmpdir(), "pi-flow-fifo-")), "writing");
  execFileSync("mkfifo", [fifo]);
  userConfig("filter.slow.smudge", `echo writing > ${fifo}; exec tail -f /dev/null`);
  writeIn(root, { ".git/info/attributes": attributes });
  const applier = spawn(process.execPath, ["--input-type=module", "-e", APPLIER, home, root, runId], { stdio: ["ignore", "inherit", "inherit"], detached: true });
  const writing = createReadStream(fifo);
  await once(writing, "data");
  const exited = once(applier, "exit");
  process.kill(-applier.pid!, "SIGKILL"); // the applier, its git and the filter: a machine that went down
  await exited;
  writing.destroy();
  userConfig("--unset", "filter.slow.smudge");
  writeIn(root, { ".git/info/attributes": "" });
}
