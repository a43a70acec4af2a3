// A link a child made that points into the repository's git folder (notes.md -> .git/config): once
// applied, the next write of that file (the user's editor, the parent agent) rewrites git's own
// config or hooks, where an fsmonitor or a hooks path runs a program at the next git command. No
// project file needs one, so an apply never writes it (see applyChanges).
import { posix } from "node:path";
import { readBlobs } from "./checkout.ts";

/** A link among the files an apply writes: its path and the blob holding its target. */
export interface LinkEntry {
  path: string;
  id: string;
}

/** Whether `target` names a `.git` folder on its way (any case: a case-insensitive disk finds it), or lies in `commonDir`. */
function intoGitFolder(target: string, commonDir: string): boolean {
  if (target.split("/").some((part) => part.toLowerCase() === ".git")) return true;
  const normal = posix.normalize(target);
  return posix.isAbsolute(normal) && (normal === commonDir || normal.startsWith(`${commonDir}/`));
}

/**
 * Whether a path of a kept tree is one git never checks out: in a `.git` folder (any case; `.git.`
 * and `git~1`, which NTFS takes for it), or through `..`, `.` or an empty name (`../x`, `/x`). git
 * never stages one, but a child's script can write such an entry into its index by hand and git
 * keeps it; git's checkout then refuses the whole tree, half way into an apply.
 */
export const uncheckable = (path: string): boolean =>
  path.split("/").some((part) => part === "" || part === "." || part === ".." || /^\.git[. ]*$/i.test(part) || /^git~\d+$/i.test(part));

/** The paths of `links` whose target points into a git folder. */
export async function linksIntoGitFolder(root: string, commonDir: string, links: readonly LinkEntry[]): Promise<string[]> {
  if (links.length === 0) return [];
  const targets = await readBlobs({ cwd: root }, [...new Set(links.map((link) => link.id))]);
  return links.filter((link) => intoGitFolder(targets.get(link.id)?.toString("utf8") ?? "", commonDir)).map((link) => link.path);
}
