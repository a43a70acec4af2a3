import { constants } from "node:fs";
import { access, mkdir, readFile, realpath, writeFile } from "node:fs/promises";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { createEditToolDefinition, createWriteToolDefinition, defineTool, type ToolDefinition } from "@earendil-works/pi-coding-agent";
import type { WorktreeRoots } from "./types.ts";

/**
 * A worktree child's write and edit: Pi's own tools, except that they refuse a path in the user's
 * working tree outside the child's worktree. Pi resolves an absolute path as written, so without
 * this a child that learned the user's checkout path (from its context, or `git worktree list`)
 * would change the user's files directly, past the review `apply` gives. The refusal names the
 * same file in the worktree. Bash is not confined (docs/isolation.md): it is not a sandbox.
 */

/** Whether `path` is `folder` or inside it. */
const within = (path: string, folder: string): boolean => path === folder || path.startsWith(folder.endsWith(sep) ? folder : folder + sep);

/**
 * Where `path` really leads: its nearest existing ancestor's real path, then the rest as written.
 * A symlink (in the worktree, or the file itself) pointing into the user's tree is followed, as writeFile would.
 */
async function realTarget(path: string): Promise<string> {
  const rest: string[] = [];
  for (let current = resolve(path); ; current = dirname(current)) {
    try {
      return join(await realpath(current), ...rest.reverse());
    } catch {
      if (dirname(current) === current) return resolve(path);
      rest.push(basename(current));
    }
  }
}

/** Throws the child's tool error when `path` lies in the user's working tree outside the child's worktree. */
function confinement(roots: WorktreeRoots): (path: string) => Promise<void> {
  let worktree: Promise<string> | undefined;
  return async (path) => {
    const target = await realTarget(path);
    worktree ??= realTarget(roots.worktree);
    const ownTree = await worktree;
    if (within(target, ownTree)) return;
    // The user's hooks and git config run programs for the user: a child writes none of them.
    if (within(target, roots.gitDir)) throw new Error(`${path} is in the user's git folder (${roots.gitDir}): a worktree child changes only its worktree.`);
    if (!within(target, roots.repository)) return;
    const inWorktree = join(ownTree, relative(roots.repository, target));
    throw new Error(
      `${path} is in the user's working tree (${roots.repository}), outside your worktree: a worktree child changes only its worktree, whose changes the user reviews before applying them. Use ${inWorktree} instead.`,
    );
  };
}

/** The child's write and edit tools in place of Pi's built-in ones, confined to its worktree. */
export function confinedFileTools(cwd: string, roots: WorktreeRoots): ToolDefinition[] {
  const allowed = confinement(roots);
  const isAllowed = (path: string): Promise<boolean> => allowed(path).then(() => true, () => false);
  const write = createWriteToolDefinition(cwd, {
    operations: {
      // No folder is made in the user's tree: the write that follows is refused, naming its file.
      mkdir: async (dir) => {
        if (await isAllowed(dir)) await mkdir(dir, { recursive: true });
      },
      writeFile: async (path, content) => {
        await allowed(path);
        await writeFile(path, content, "utf-8");
      },
    },
  });
  const edit = createEditToolDefinition(cwd, {
    operations: {
      access: async (path) => {
        await allowed(path);
        await access(path, constants.R_OK | constants.W_OK);
      },
      readFile: (path) => readFile(path),
      writeFile: async (path, content) => {
        await allowed(path);
        await writeFile(path, content, "utf-8");
      },
    },
  });
  // Active only where the built-in tools would be: the child's tools list (or Pi's defaults) decides.
  return [defineTool({ ...write, defaultActive: false }), defineTool({ ...edit, defaultActive: false })];
}
