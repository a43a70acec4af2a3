// The user's own git config (git's global one) for a test process: a file of its own, so a test can
// define the filters a user would (pi-flow's git runs no driver the repository's config defines).
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Points GIT_CONFIG_GLOBAL (for pi-flow's git and the processes a test starts) at an empty file; `git config` of it. */
export function useOwnUserGitConfig(): (...args: string[]) => void {
  const file = join(mkdtempSync(join(tmpdir(), "pi-flow-user-config-")), "gitconfig");
  writeFileSync(file, "");
  process.env.GIT_CONFIG_GLOBAL = file;
  return (...args) => void execFileSync("git", ["config", "--file", file, ...args]);
}
