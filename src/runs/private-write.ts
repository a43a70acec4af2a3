import { randomBytes } from "node:crypto";
import { existsSync, lstatSync, mkdirSync, realpathSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative } from "node:path";
import { FlowError } from "../contract/errors.ts";
import { errorCode } from "./fsio.ts";

const isInside = (dir: string, root: string): boolean => {
  const rel = relative(root, dir);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
};

const isLink = (path: string): boolean => {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
};

/** The nearest folder of `path` that exists, links resolved. */
function nearestExistingFolder(path: string): string {
  let dir = dirname(path);
  while (!existsSync(dir) && dirname(dir) !== dir) dir = dirname(dir);
  return realpathSync(dir);
}

/**
 * Refuses, as request_invalid, a target that is a symbolic link (even a dangling one), and with
 * `project`, one whose folder resolves outside it: a cloned project must not aim pi-flow's writes
 * at another file of the user's.
 */
export function checkPrivateTarget(target: string, project?: string): void {
  if (isLink(target)) {
    throw new FlowError("request_invalid", `${target} is a symbolic link; pi-flow does not write through links. Remove it, or choose another file.`);
  }
  if (project !== undefined && !isInside(nearestExistingFolder(target), realpathSync(project))) {
    throw new FlowError("request_invalid", `${target} resolves outside the project (through a linked folder); pi-flow writes there only inside it.`);
  }
}

/**
 * Writes `text` to `target`, readable by its owner only: into an exclusive temporary file beside
 * it, then renamed over it, so no link at the target is followed and no reader sees half a file.
 */
export function writePrivately(target: string, text: string, project?: string): void {
  checkPrivateTarget(target, project);
  const temp = join(dirname(target), `.${basename(target)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
  try {
    mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
    // The folder may have been swapped for a link meanwhile: check again once it exists.
    checkPrivateTarget(target, project);
    writeFileSync(temp, text, { flag: "wx", mode: 0o600 });
    renameSync(temp, target);
  } catch (error) {
    rmSync(temp, { force: true });
    if (error instanceof FlowError) throw error;
    throw new FlowError("request_invalid", `Cannot write ${target} (${errorCode(error) ?? "error"}).`);
  }
}
