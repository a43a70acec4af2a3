// Writing a merged tree's files into the user's working tree, as git would check them out, but
// with the attributes of the user's tree as it was: a child's `.gitattributes` can name a filter
// the user's git config defines (lfs, or any program), or switch on eol or ident conversion, and
// git reads the attributes of the tree it checks out. git 2.39 has no GIT_ATTR_SOURCE, so the
// private index git checks out from holds the user's `.gitattributes`, and the child's are written
// by pi-flow itself, byte for byte, last.
import { lstat, mkdir, mkdtemp, rm, symlink, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { git, nulFields, runGit, type GitOptions } from "./git.ts";

/** Whether `path` names an attributes file, at the top or in a folder. */
export const isAttributesFile = (path: string): boolean => path === ".gitattributes" || path.endsWith("/.gitattributes");

interface TreeEntry {
  mode: string;
  id: string;
  path: string;
}

/** The entries of `tree` at `paths` (files, links or gitlinks). */
async function entriesOf(root: string, tree: string, paths: readonly string[]): Promise<TreeEntry[]> {
  if (paths.length === 0) return [];
  // The whole tree, filtered: a child's thousands of paths never make one command line too long.
  const listed = await runGit(["ls-tree", "-r", "-z", tree], { cwd: root });
  if (listed.code !== 0) throw new Error(`git ls-tree failed: ${listed.stderr}`);
  const wanted = new Set(paths);
  const entries: TreeEntry[] = [];
  for (const line of nulFields(listed.stdout)) {
    const tab = line.indexOf("\t");
    const path = line.slice(tab + 1);
    if (!wanted.has(path)) continue;
    const [mode = "", , id = ""] = line.slice(0, tab).split(" ");
    entries.push({ mode, id, path });
  }
  return entries;
}

/** The bytes of each blob, in one `cat-file --batch`. */
export async function readBlobs(place: GitOptions, ids: readonly string[]): Promise<Map<string, Buffer>> {
  const found = new Map<string, Buffer>();
  if (ids.length === 0) return found;
  const out = await runGit(["cat-file", "--batch"], { ...place, input: ids.map((id) => `${id}\n`).join("") });
  if (out.code !== 0) throw new Error(`git cat-file failed: ${out.stderr}`);
  let at = 0;
  while (at < out.stdout.length) {
    const end = out.stdout.indexOf(0x0a, at);
    const [id = "", type, size = ""] = out.stdout.subarray(at, end).toString("utf8").split(" ");
    if (type === "missing" || end < 0) throw new Error(`git cat-file: object ${id} is missing`);
    const length = Number(size);
    found.set(id, out.stdout.subarray(end + 1, end + 1 + length));
    at = end + 1 + length + 1;
  }
  return found;
}

/**
 * Makes room for `path`: its folders (a file or link where one is needed is the merge's to replace:
 * inTheWay in apply.ts left only those) and nothing at `path` itself.
 */
async function makeRoom(root: string, path: string): Promise<void> {
  const parts = path.split("/");
  let at = root;
  for (const part of parts.slice(0, -1)) {
    at = join(at, part);
    const stats = await lstat(at).catch(() => null);
    if (stats?.isDirectory()) continue;
    if (stats) await unlink(at);
    await mkdir(at);
  }
  await rm(join(root, path), { recursive: true, force: true });
}

/** Writes one entry as git stores it: a file's bytes and executable bit, a link's target, a gitlink's empty folder. */
async function writeEntry(root: string, entry: TreeEntry, bytes: Buffer | undefined): Promise<void> {
  await makeRoom(root, entry.path);
  const at = join(root, entry.path);
  if (entry.mode === "160000") return void (await mkdir(at));
  if (bytes === undefined) throw new Error(`git cat-file: object ${entry.id} is missing`);
  if (entry.mode === "120000") return symlink(bytes.toString("utf8"), at);
  await writeFile(at, bytes, { flag: "wx", mode: entry.mode === "100755" ? 0o777 : 0o666 });
}

/**
 * Writes `tree`'s version of `paths` into the working tree at `root` (mode and bytes exact),
 * through a private index; attributes are those of `userTree`, the user's tree before the apply.
 */
export async function checkoutWithUserAttributes(root: string, tree: string, userTree: string, paths: readonly string[]): Promise<void> {
  if (paths.length === 0) return;
  const attributes = paths.filter(isAttributesFile);
  const files = paths.filter((path) => !isAttributesFile(path));
  const dir = await mkdtemp(join(tmpdir(), "pi-flow-apply-"));
  try {
    const env = { GIT_INDEX_FILE: join(dir, "index") };
    await git(["read-tree", tree], { cwd: root, env });
    if (attributes.length > 0) {
      // The user's attributes files where the merge changes them; none where the user had none.
      const users = new Map((await entriesOf(root, userTree, attributes)).map((entry) => [entry.path, entry]));
      const removed = `0 ${"0".repeat(40)}`;
      const lines = attributes.map((path) => {
        const user = users.get(path);
        return `${user ? `${user.mode} ${user.id}` : removed}\t${path}\0`;
      });
      await git(["update-index", "-z", "--index-info"], { cwd: root, env, input: lines.join("") });
    }
    if (files.length > 0) await git(["checkout-index", "-f", "-z", "--stdin"], { cwd: root, env, input: files.map((path) => `${path}\0`).join("") });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const entries = await entriesOf(root, tree, attributes);
  const bytes = await readBlobs({ cwd: root }, entries.filter((entry) => entry.mode !== "160000").map((entry) => entry.id));
  for (const entry of entries) await writeEntry(root, entry, bytes.get(entry.id));
}
