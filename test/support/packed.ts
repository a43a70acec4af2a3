/**
 * This checkout as `npm pack` makes it, packed once per change of what it publishes and shared by
 * every test that installs the tarball (each pack is a second of npm's CPU or more). The tarball
 * sits under node_modules/.cache/pi-flow-pack/<hash of the published files>/; a changed file makes
 * a new folder, and older ones are dropped as it is made.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { PROJECT_ROOT } from "./pi-session.ts";

/** The command docs/workflows.md tells a user to run in the checkout. */
export const PACK_COMMAND = "npm pack";
const CACHE = join(PROJECT_ROOT, "node_modules", ".cache", "pi-flow-pack");

function hashTree(path: string, hash: ReturnType<typeof createHash>): void {
  if (!existsSync(path)) return;
  if (statSync(path).isDirectory()) {
    for (const name of readdirSync(path).sort()) hashTree(join(path, name), hash);
    return;
  }
  hash.update(relative(PROJECT_ROOT, path)).update("\0").update(readFileSync(path)).update("\0");
}

/** A hash of package.json and every file its `files` publishes. */
function publishedHash(): string {
  const manifest = JSON.parse(readFileSync(join(PROJECT_ROOT, "package.json"), "utf8")) as { files: string[] };
  const hash = createHash("sha256");
  for (const part of ["package.json", ...manifest.files]) hashTree(join(PROJECT_ROOT, part), hash);
  return hash.digest("hex").slice(0, 16);
}

/**
 * The folder holding this checkout's tarball, pi-flow-<version>.tgz, and nothing else. Packs it
 * with PACK_COMMAND (in `env`, a user's shell environment by default) when the published files
 * changed. Two test files asking at once may both pack; the first rename wins and both use it.
 */
export function packedCheckout(env: NodeJS.ProcessEnv = process.env): string {
  const folder = join(CACHE, publishedHash());
  if (existsSync(folder)) return folder;
  mkdirSync(CACHE, { recursive: true });
  const scratch = mkdtempSync(join(CACHE, ".packing-"));
  execFileSync("sh", ["-c", `${PACK_COMMAND} --pack-destination '${scratch}'`], { cwd: PROJECT_ROOT, env, stdio: ["ignore", "ignore", "pipe"] });
  try {
    renameSync(scratch, folder);
  } catch (error) {
    rmSync(scratch, { recursive: true, force: true });
    if (!existsSync(folder)) throw error;
  }
  for (const name of readdirSync(CACHE)) if (!name.startsWith(".") && join(CACHE, name) !== folder) rmSync(join(CACHE, name), { recursive: true, force: true });
  return folder;
}
