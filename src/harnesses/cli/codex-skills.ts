import { readdirSync, realpathSync, statSync } from "node:fs";
import { join } from "node:path";
import { tomlString } from "./codex-mcp.ts";
import { CliLaunchError } from "./types.ts";

/**
 * The skills a project holds for Codex, turned off for a child of a project Pi does not trust. Codex
 * reads `.agents/skills` and the project's `.codex/skills` whatever its trust (codex-rs core-skills
 * loader: repo roots are not trust-gated, and an untrusted project's config layer still names its
 * skills folder), and puts each skill's name, description and path in the model's instructions,
 * with a rule to follow a skill that matches the task. Pi withholds a project's `.agents/skills`
 * until it is trusted, so pi-flow does too: each SKILL.md Codex would find is turned off by path
 * (`-c skills.config=[{path=…,enabled=false},…]`, a rule Codex reads from the session's flags).
 * With `project_root_markers=[]` the project root is the child's folder, so those are its only roots.
 */

/** Codex's own bounds on a skills root (loader.rs): its depth, and the folders it visits. */
const MAX_SCAN_DEPTH = 6;
const MAX_DIRS_PER_ROOT = 2000;
/** More skills than this would make one `-c` argument too long for a command line (Linux takes 128 KiB). */
const MAX_DISABLED_SKILLS = 256;

const PROJECT_SKILL_ROOTS = [
  [".agents", "skills"],
  [".codex", "skills"],
];

/** A project whose skills cannot all be turned off: its child is not started. */
const tooMany = (what: string) =>
  new CliLaunchError(
    `this project's Codex skills (.agents/skills, .codex/skills) are more than pi-flow turns off for a child of a project Pi does not trust (${what}), so the codex child was not started; trust the project, or run the child on another harness`,
  );

const statOf = (path: string) => {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
};

const realpathOf = (path: string): string => {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
};

/**
 * The SKILL.md files under one root, as Codex walks it: breadth first, names starting with a dot
 * skipped, symlinked folders followed (by their real path), at most MAX_SCAN_DEPTH deep and
 * MAX_DIRS_PER_ROOT folders; each file by its real path, as Codex names a skill.
 */
function skillFilesUnder(root: string): string[] {
  if (!statOf(root)?.isDirectory()) return [];
  const found: string[] = [];
  const start = realpathOf(root);
  const visited = new Set([start]);
  const queue: Array<[string, number]> = [[start, 0]];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    const [dir, depth] = next;
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      if (name.startsWith(".")) continue;
      const path = join(dir, name);
      const stats = statOf(path);
      if (stats?.isDirectory()) {
        const real = realpathOf(path);
        if (depth + 1 > MAX_SCAN_DEPTH || visited.has(real)) continue;
        // Codex stops here too, but which folders it reached first is its order's: this child is not started.
        if (visited.size >= MAX_DIRS_PER_ROOT) throw tooMany(`more than ${MAX_DIRS_PER_ROOT} folders under ${root}`);
        visited.add(real);
        queue.push([real, depth + 1]);
      } else if (stats?.isFile() && name === "SKILL.md") {
        found.push(realpathOf(path));
      }
    }
  }
  return found;
}

/** The `-c` flags that turn off every skill the project in `cwd` holds for Codex; none when it holds none. */
export function disabledProjectSkills(cwd: string): string[] {
  const files = [...new Set(PROJECT_SKILL_ROOTS.flatMap((parts) => skillFilesUnder(join(cwd, ...parts))))];
  if (files.length === 0) return [];
  if (files.length > MAX_DISABLED_SKILLS) throw tooMany(`${files.length} skills (at most ${MAX_DISABLED_SKILLS})`);
  return ["-c", `skills.config=[${files.map((file) => `{path=${tomlString(file)},enabled=false}`).join(",")}]`];
}
