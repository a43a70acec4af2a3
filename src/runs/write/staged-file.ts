import { randomBytes } from "node:crypto";
import { closeSync, constants, openSync, rmSync, statSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { FlowError, type ErrorCode } from "../../contract/errors.ts";

/**
 * A file that will replace a user-named target is first written beside it under a name no one can
 * guess, created exclusively and without following a link: a symlink or file planted at a
 * predictable name cannot redirect the write. It replaces the target by rename only when the
 * caller says so. A target that exists and is not a regular file is refused before anything runs.
 */

/** Refuses a target that is a directory, FIFO, device or socket, or whose folder does not exist. */
export function assertReplaceableTarget(target: string, what: string, code: ErrorCode): void {
  const stats = statSync(target, { throwIfNoEntry: false });
  if (stats && !stats.isFile()) throw new FlowError(code, `${what} ${target} is not a regular file: give a file path to write.`);
  const folder = statSync(dirname(target), { throwIfNoEntry: false });
  if (!folder?.isDirectory()) throw new FlowError(code, `${what} ${target} cannot be written: its folder ${dirname(target)} does not exist.`);
}

/** A fresh `.<name>.<random>.staging` path beside `target`; nothing is created yet. */
export function stagingPathFor(target: string): string {
  return join(dirname(target), `.${basename(target)}.${randomBytes(9).toString("hex")}.staging`);
}

/** Creates `path` (from stagingPathFor) exclusively, never through a link, readable by its owner only, holding `text`. */
export function createStagedFile(path: string, text: string): void {
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
  const fd = openSync(path, flags, 0o600);
  try {
    const bytes = Buffer.from(text, "utf8");
    let written = 0;
    while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
  } catch (error) {
    closeSync(fd);
    rmSync(path, { force: true });
    throw error;
  }
  closeSync(fd);
}
