// The user's own git config (git's global one) for a test process: a file of its own, so a test can
// define the filters a user would (pi-flow's git runs no driver the repository's config defines).
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";

/**
 * Points GIT_CONFIG_GLOBAL (for pi-flow's git and the processes a test starts) at an empty file
 * until the test file ends; `git config` of it. Call it at a file's top level: the next file in a
 * shared worker must not inherit the filters this one defined.
 */
export function useOwnUserGitConfig(): (...args: string[]) => void {
  const file = join(mkdtempSync(join(tmpdir(), "pi-flow-user-config-")), "gitconfig");
  writeFileSync(file, "");
  const before = process.env.GIT_CONFIG_GLOBAL;
  process.env.GIT_CONFIG_GLOBAL = file;
  afterAll(() => {
    if (before === undefined) delete process.env.GIT_CONFIG_GLOBAL;
    else process.env.GIT_CONFIG_GLOBAL = before;
  });
  return (...args) => void execFileSync("git", ["config", "--file", file, ...args]);
}
