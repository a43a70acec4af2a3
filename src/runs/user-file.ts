import { closeSync, constants, fstatSync, openSync } from "node:fs";
import { FlowError, type ErrorCode } from "../contract/errors.ts";
import { readAt, errorCode } from "./fsio.ts";

/**
 * Files a user names (a script, `--args @file`, a cassette) are read only when they are regular
 * files and only up to a stated size. A FIFO, a device (`/dev/zero`) or a directory is refused
 * before a byte is read, and a file over the size is refused after reading one byte past it, so
 * neither a hang nor an unbounded allocation can follow from a path.
 */

/** The most a workflow script file may hold: what the launch record keeps of it. */
export const SCRIPT_MAX_BYTES = 1024 * 1024;
/** The most `--args` (and a tool call's `args`) may hold, as UTF-8 JSON. */
export const ARGS_MAX_BYTES = 1024 * 1024;
/** The most a cassette may hold. */
export const CASSETTE_MAX_BYTES = 64 * 1024 * 1024;

export interface UserFileRule {
  /** How the message names the file: "The script", "The --args file", "The cassette". */
  what: string;
  maxBytes: number;
  /** The code a refusal carries. */
  code: ErrorCode;
  /** The code when the file does not exist (default: `code`). */
  missingCode?: ErrorCode;
}

const KIB = 1024;

/** 1048576 → "1 MiB", 1536 → "1.5 KiB": how messages and docs state a limit. */
export function formatBytes(bytes: number): string {
  if (bytes >= KIB * KIB) return `${+(bytes / (KIB * KIB)).toFixed(1)} MiB`;
  if (bytes >= KIB) return `${+(bytes / KIB).toFixed(1)} KiB`;
  return `${bytes} bytes`;
}

function kindOf(mode: number): string {
  const type = mode & constants.S_IFMT;
  if (type === constants.S_IFDIR) return "a directory";
  if (type === constants.S_IFIFO) return "a FIFO";
  if (type === constants.S_IFCHR || type === constants.S_IFBLK) return "a device";
  if (type === constants.S_IFSOCK) return "a socket";
  return "not a regular file";
}

/**
 * The text of a regular file of at most `rule.maxBytes` bytes, or a FlowError. The file is opened
 * non-blocking, so opening a FIFO with no writer returns at once, and checked on the open
 * descriptor, so a file swapped after a check cannot slip through.
 */
export function readUserFile(path: string, rule: UserFileRule): string {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    const code = errorCode(error) ?? "error";
    // ENOENT is said in words: a mistyped path is the commonest mistake, and the code means nothing to most.
    if (code === "ENOENT") throw new FlowError(rule.missingCode ?? rule.code, `${rule.what} ${path} does not exist (ENOENT).`);
    throw new FlowError(rule.code, `${rule.what} ${path} cannot be read (${code}).`);
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw new FlowError(rule.code, `${rule.what} ${path} is ${kindOf(stats.mode)}: give a regular file.`);
    const tooBig = () => new FlowError(rule.code, `${rule.what} ${path} is over ${formatBytes(rule.maxBytes)} (${rule.maxBytes} bytes), the most it may hold.`);
    if (stats.size > rule.maxBytes) throw tooBig();
    // One byte past what fstat said tells a file that grew since; then read up to one byte past the limit.
    const want = stats.size + 1;
    let bytes = readAt(fd, 0, want);
    if (bytes.length === want) bytes = readAt(fd, 0, rule.maxBytes + 1);
    if (bytes.length > rule.maxBytes) throw tooBig();
    return bytes.toString("utf8");
  } catch (error) {
    if (error instanceof FlowError) throw error;
    throw new FlowError(rule.code, `${rule.what} ${path} cannot be read (${errorCode(error) ?? "error"}).`);
  } finally {
    closeSync(fd);
  }
}
