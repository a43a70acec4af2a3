// `git add -A` of a child's worktree with the attributes of its base: a `.gitattributes` the child
// wrote can name a filter the user's git config defines (lfs, or any program) or switch on eol
// conversion, and git reads the working tree's attributes as it adds. git 2.39 has no
// GIT_ATTR_SOURCE, so the child's attributes files are put back to their base version while git
// adds, then kept as the child wrote them, unfiltered (an apply writes them the same way).
import { lstat, mkdtemp, readlink, rm, symlink, writeFile } from "node:fs/promises";
import { readPlainFile } from "./plain-file.ts";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { addAll } from "./add-all.ts";
import { isAttributesFile, readBlobs } from "./checkout.ts";
import { git, nulFields, runGit, type GitOptions } from "./git.ts";

/** Every attributes file, at the top or in a folder, as a pathspec. */
const ATTRIBUTES_FILES = ":(top,glob)**/.gitattributes";

/** git reads no attributes file this large (ATTR_MAX_FILE_SIZE, git 2.39.1 on): nor is one read into memory here. */
const MAX_ATTRIBUTES_BYTES = 100 * 1024 * 1024;

interface ChildAttributes {
  path: string;
  /** Its git mode: a file (100644, 100755) or a link (120000), whose target `bytes` holds. */
  mode: string;
  bytes: Buffer;
  /** The base's bytes at that path, or undefined when the base has none. */
  base?: Buffer;
}

/** Writes an attributes file's bytes, or its link, in place of whatever is there (never through a link). */
async function put(at: string, mode: string, bytes: Buffer | string): Promise<void> {
  await rm(at, { force: true });
  if (mode === "120000") return symlink(bytes.toString(), at);
  await writeFile(at, bytes, { flag: "wx", mode: mode === "100755" ? 0o777 : 0o666 });
}

/**
 * The attributes files on disk whose content or kind differ from the base's. A link counts: git
 * reads none on disk, but once one is staged it reads the index's entry, the link's target, as attributes.
 */
async function changedAttributes(place: GitOptions, base: string): Promise<ChildAttributes[]> {
  // Every one, ignored or not: git reads an ignored attributes file too. Listing reads no contents.
  const listed = await runGit(["ls-files", "-z", "-c", "-o", "--", ATTRIBUTES_FILES], place);
  if (listed.code !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`);
  const paths = [...new Set(nulFields(listed.stdout))].filter(isAttributesFile);
  if (paths.length === 0) return [];
  const tree = await runGit(["ls-tree", "-r", "-z", base], place);
  if (tree.code !== 0) throw new Error(`git ls-tree failed: ${tree.stderr}`);
  const inBase = new Map<string, { mode: string; id: string }>();
  for (const line of nulFields(tree.stdout)) {
    const tab = line.indexOf("\t");
    const path = line.slice(tab + 1);
    const [mode = "", type, id = ""] = line.slice(0, tab).split(" ");
    if (isAttributesFile(path) && type === "blob") inBase.set(path, { mode, id });
  }
  const baseBytes = await readBlobs(place, [...inBase.values()].map((entry) => entry.id));
  const changed: ChildAttributes[] = [];
  for (const path of paths) {
    const at = join(place.cwd, path);
    const stats = await lstat(at).catch(() => null);
    if ((!stats?.isFile() && !stats?.isSymbolicLink()) || stats.size >= MAX_ATTRIBUTES_BYTES) continue;
    const mode = stats.isSymbolicLink() ? "120000" : (stats.mode & 0o111) !== 0 ? "100755" : "100644";
    // Read through one descriptor: a process the child left running may have made it a FIFO since (plain-file.ts).
    const bytes = stats.isSymbolicLink() ? Buffer.from(await readlink(at)) : await readPlainFile(at, { noLinks: true });
    if (bytes === null) continue;
    const entry = inBase.get(path);
    const before = entry === undefined ? undefined : baseBytes.get(entry.id);
    // A file's executable bit alone changes nothing git reads.
    if (before?.equals(bytes) && (entry!.mode === "120000") === (mode === "120000")) continue;
    changed.push({ path, mode, bytes, ...(before && entry!.mode !== "120000" ? { base: before } : {}) });
  }
  return changed;
}

/**
 * `addAll` in a child's worktree (made from `base`), reading only the base's attributes: the
 * child's attributes files are kept unfiltered. git reads attributes from the disk and, for a file
 * the disk lacks, from the index, and it reads them again whenever it writes an index (to check a
 * file changed in the same second): so both hold the base's versions (an empty file where the base
 * has none) until the index is final.
 * `restore`: the child's files are written back afterwards (a worktree the child goes on using);
 * without it the disk keeps the base's (a worktree about to be removed, whose index git writes again).
 */
export async function addChildTree(place: GitOptions, base: string, pathspecs: readonly string[], restore: boolean): Promise<string[]> {
  const changed = await changedAttributes(place, base);
  const indexed = await runGit(["ls-files", "-z", "-c", "--", ATTRIBUTES_FILES], place);
  const inIndex = nulFields(indexed.stdout).filter(isAttributesFile);
  if (changed.length === 0 && inIndex.length === 0) return addAll(place, pathspecs);
  try {
    // An empty file where the base has none: it names no attribute, and git lists it as add -A would.
    for (const file of changed) await put(join(place.cwd, file.path), "100644", file.base ?? "");
    await git(["update-index", "-z", "--index-info"], { ...place, input: await baseEntries(place, base, [...new Set([...inIndex, ...changed.map((file) => file.path)])]) });
    const passed = await addAll(place, pathspecs);
    if (changed.length > 0) await addUnfiltered(place, changed, pathspecs, passed);
    return passed;
  } finally {
    if (restore) for (const file of changed) await put(join(place.cwd, file.path), file.mode, file.bytes);
  }
}

/** `--index-info` lines giving each of `paths` the base's entry, or none where the base has none. */
async function baseEntries(place: GitOptions, base: string, paths: readonly string[]): Promise<string> {
  const tree = await runGit(["ls-tree", "-r", "-z", base], place);
  if (tree.code !== 0) throw new Error(`git ls-tree failed: ${tree.stderr}`);
  const wanted = new Set(paths);
  const lines = new Map<string, string>();
  for (const line of nulFields(tree.stdout)) {
    const tab = line.indexOf("\t");
    const path = line.slice(tab + 1);
    if (wanted.has(path)) lines.set(path, `${line.slice(0, tab).replace(/ blob | commit /, " ")}\t${path}\0`);
  }
  return paths.map((path) => lines.get(path) ?? `0 ${"0".repeat(40)}\t${path}\0`).join("");
}

/** Stages the child's attributes files as it wrote them, unfiltered: those add -A would have added (tracked, or neither ignored nor left out by the pathspecs). */
async function addUnfiltered(place: GitOptions, changed: readonly ChildAttributes[], pathspecs: readonly string[], passed: readonly string[]): Promise<void> {
  const excluded = passed.map((path) => `:(top,exclude,literal)${path}`);
  // Listing reads no contents, so no attributes: the disk holds the base's versions meanwhile.
  const listed = await runGit(["ls-files", "-z", "-c", "-o", "--exclude-standard", "--", ATTRIBUTES_FILES, ...pathspecs, ...excluded], place);
  const kept = new Set(nulFields(listed.stdout));
  const adding = changed.filter((file) => kept.has(file.path));
  if (adding.length === 0) return;
  // Hashed from copies under plain names (a child's name may hold a line break), never from the disk.
  const dir = await mkdtemp(join(tmpdir(), "pi-flow-attributes-"));
  try {
    for (const [i, file] of adding.entries()) await writeFile(join(dir, String(i)), file.bytes);
    const ids = (await git(["hash-object", "-w", "--no-filters", "--stdin-paths"], { ...place, input: adding.map((_, i) => `${join(dir, String(i))}\n`).join("") })).split("\n");
    const lines = adding.map((file, i) => `${file.mode} ${ids[i]}\t${file.path}\0`);
    await git(["update-index", "-z", "--index-info"], { ...place, input: lines.join("") });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
