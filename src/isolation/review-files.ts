// The files of a child's kept changes that the person applying them should read before running
// anything: they make the user's own tools run code later (git drivers and hooks, direnv, CI,
// editor tasks, npm scripts), point out of the working tree, or turn a file into a program. An apply
// lands them, as the child wrote them, and every answer names them (docs/isolation.md, "Files to review").
import { posix } from "node:path";
import { redactText } from "../runs/index.ts";
import { readBlobs } from "./checkout.ts";
import { nulFields, runGit } from "./git.ts";

/** One file to review: its path (as git lists it) and why. */
export interface ReviewNote {
  path: string;
  why: string;
}

interface ChangedEntry {
  oldMode: string;
  newMode: string;
  oldId: string;
  newId: string;
  path: string;
}

const EMPTY_ID = /^0+$/;

/** Files whose mere presence means a tool runs what they say, matched on their path: why, or undefined. */
function runsCodeWhy(path: string): string | undefined {
  const name = posix.basename(path);
  if (name === ".envrc") return "direnv runs it when you enter its folder";
  if (path === ".gitmodules") return "git fetches submodules from the URLs it names";
  if (/^(?:\.husky|\.githooks)\//.test(path)) return "a git hook: your git runs it when its hooks path points there";
  if (/^\.github\/workflows\//.test(path)) return "CI runs it on the next push";
  if (path === ".vscode/tasks.json" || path === ".vscode/settings.json" || path === ".vscode/launch.json") return "VS Code runs the commands it names";
  if (/^\.devcontainer\//.test(path) || name === ".devcontainer.json") return "a dev container runs the commands it names";
  if (name === ".pre-commit-config.yaml" || name === "lefthook.yml" || name === ".lefthook.yml") return "a hook manager runs the hooks it names on commit";
  if (name === ".npmrc" || name === ".yarnrc.yml" || name === ".yarnrc") return "npm or yarn read it: it can name programs and Node options they run";
  if (/(?:^|\/)\.cargo\/config(?:\.toml)?$/.test(path)) return "cargo reads it: it can name programs cargo runs";
  if (name === "mise.toml" || name === ".mise.toml") return "mise runs the hooks and tasks it names";
  return undefined;
}

/** The drivers a `.gitattributes` names (filter=, diff=, merge=): programs the user's git config defines, run on the files it picks. */
function driverLines(text: string): string[] {
  return text.split("\n").filter((line) => !line.trimStart().startsWith("#") && /(?:^|\s)(?:filter|diff|merge)=\S/.test(line));
}

/** A package.json's scripts, as text to compare; undefined when it has none, the whole text when it does not parse. */
function scriptsOf(bytes: Buffer | undefined): string | undefined {
  if (bytes === undefined) return undefined;
  try {
    const parsed = JSON.parse(bytes.toString("utf8")) as unknown;
    const scripts = typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>).scripts : undefined;
    return scripts === undefined ? undefined : JSON.stringify(scripts);
  } catch {
    return bytes.toString("utf8");
  }
}

/** Where a link points when that is out of the working tree (absolute, or climbing above the top); undefined when it stays inside. */
export function linkOutOfTree(path: string, target: string): boolean {
  const inside = posix.normalize(posix.join(posix.dirname(path), target));
  return posix.isAbsolute(target) || inside === ".." || inside.startsWith("../");
}

/** The largest attributes file, package.json or link target read to decide whether it needs review. */
const REVIEW_READ_MAX_BYTES = 1024 * 1024;

/** Each blob's size, from one `cat-file --batch-check`. */
async function blobSizes(root: string, ids: readonly string[]): Promise<Map<string, number>> {
  const sizes = new Map<string, number>();
  if (ids.length === 0) return sizes;
  const out = await runGit(["cat-file", "--batch-check"], { cwd: root, input: ids.map((id) => `${id}\n`).join("") });
  if (out.code !== 0) throw new Error(`git cat-file failed: ${out.stderr}`);
  for (const line of out.stdout.toString("utf8").split("\n")) {
    const [id = "", type = "", size = ""] = line.split(" ");
    if (type === "blob") sizes.set(id, Number(size));
  }
  return sizes;
}

async function changedEntries(root: string, from: string, to: string): Promise<ChangedEntry[]> {
  const listed = await runGit(["diff-tree", "-r", "-z", "--no-renames", from, to], { cwd: root });
  if (listed.code !== 0) throw new Error(`git diff-tree failed: ${listed.stderr}`);
  const fields = nulFields(listed.stdout);
  const entries: ChangedEntry[] = [];
  // Pairs of ":<old mode> <new mode> <old id> <new id> <status>" and the path.
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const [oldMode = "", newMode = "", oldId = "", newId = "", status = ""] = fields[i]!.slice(1).split(" ");
    if (status === "D") continue; // a deleted file runs nothing
    entries.push({ oldMode, newMode, oldId, newId, path: fields[i + 1]! });
  }
  return entries;
}

/** The files added or changed between `base` and `commit` in the repository at `root` that need a person's review, in path order. */
export async function filesToReview(root: string, base: string, commit: string): Promise<ReviewNote[]> {
  const entries = await changedEntries(root, base, commit);
  const isAttributes = (path: string) => posix.basename(path) === ".gitattributes";
  const isPackage = (path: string) => posix.basename(path) === "package.json";
  // Only the few blobs a reason needs are read: links, attributes files and package.json, old and new.
  const wanted = entries.flatMap((entry) => {
    if (entry.newMode === "120000") return [entry.newId];
    if (entry.newMode === "160000") return [];
    if (isAttributes(entry.path)) return [entry.newId];
    if (isPackage(entry.path)) return [entry.newId, ...(EMPTY_ID.test(entry.oldId) || entry.oldMode !== "100644" ? [] : [entry.oldId])];
    return [];
  });
  // A child's 3 GB package.json is not read into memory to find its scripts: it is listed unread.
  const sizes = await blobSizes(root, [...new Set(wanted)]);
  const tooLarge = new Set([...sizes].filter(([, size]) => size > REVIEW_READ_MAX_BYTES).map(([id]) => id));
  const blobs = await readBlobs({ cwd: root }, [...sizes.keys()].filter((id) => !tooLarge.has(id)));
  const notes: ReviewNote[] = [];
  for (const entry of entries) {
    const { path, newMode, oldMode } = entry;
    if (newMode === "120000") {
      const target = blobs.get(entry.newId)?.toString("utf8");
      // The target is the child's text, in every answer's data as well as its lines: redacted like any.
      if (target !== undefined && linkOutOfTree(path, target)) notes.push({ path, why: `a link to ${redactText(target).text}, out of the working tree` });
      continue;
    }
    const fixed = runsCodeWhy(path);
    if (fixed) notes.push({ path, why: fixed });
    else if ((isAttributes(path) || isPackage(path)) && (tooLarge.has(entry.newId) || tooLarge.has(entry.oldId))) {
      notes.push({ path, why: `over ${REVIEW_READ_MAX_BYTES / 1024 / 1024} MiB, not read: it may name programs your tools run` });
    }
    else if (isAttributes(path) && driverLines(blobs.get(entry.newId)?.toString("utf8") ?? "").length > 0) {
      notes.push({ path, why: "names filter, diff or merge drivers: your git runs the programs your config gives them on the files it picks" });
    } else if (isPackage(path) && scriptsOf(blobs.get(entry.newId)) !== scriptsOf(EMPTY_ID.test(entry.oldId) ? undefined : blobs.get(entry.oldId))) {
      notes.push({ path, why: "its scripts changed: npm runs them on install and npm run" });
    } else if (newMode === "100755" && oldMode !== "100755") {
      notes.push({ path, why: "made executable" });
    }
  }
  return notes;
}

/** A note as one line: "path (why)". */
export const reviewLine = (note: ReviewNote, shown: (path: string) => string): string => `${shown(note.path)} (${note.why})`;
