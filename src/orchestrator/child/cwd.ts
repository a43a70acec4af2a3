// Where a child may work. A cwd is authority too: a writing child works on whatever tree it is
// given, so a child's cwd stays inside the parent's project unless the parent could reach the
// place itself (it holds bash), and a writing child is never given a filesystem root.
import { realpathSync } from "node:fs";
import { dirname, isAbsolute, relative } from "node:path";
import { FlowError } from "../../contract/errors.ts";
import { writes } from "../../harnesses/index.ts";

/** The path with its links resolved, so a link inside the project cannot lead a child out of it. */
function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

function inside(path: string, root: string): boolean {
  const rel = relative(root, path);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

/**
 * Refuses (request_invalid) a cwd the caller asked for that the child may not have: a filesystem
 * root for a child that writes, and any directory outside the parent's cwd tree unless the parent
 * session holds bash. Errors quote only what the caller wrote.
 */
export function checkChildCwd(
  requested: string,
  cwd: string,
  bound: { projectCwd: string; parentTools: readonly string[]; childTools: readonly string[] },
): void {
  const where = real(cwd);
  if (dirname(where) === where && writes(bound.childTools)) {
    throw new FlowError("request_invalid", `cwd ${JSON.stringify(requested)} is a filesystem root: a child that can write, edit or run commands is never given one.`);
  }
  if (inside(where, real(bound.projectCwd)) || bound.parentTools.includes("bash")) return;
  throw new FlowError(
    "request_invalid",
    `cwd ${JSON.stringify(requested)} is outside this session's working directory, and this session holds no bash to reach it itself; give a cwd inside the project.`,
  );
}
