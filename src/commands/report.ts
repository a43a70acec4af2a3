import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { FlowError } from "../contract/errors.ts";
import { defaultReportPath, saveReport } from "../report/index.ts";
import { assertRunId, type RunStore } from "../runs/index.ts";

/**
 * FILE as Pi's own `/export FILE` reads it: `~` and `~/…` are the home folder's. No shell expands
 * them in a Pi command, and a folder named `~` made in the project is one `rm -rf ~` from the home.
 */
function expandHome(file: string): string {
  if (file === "~") return homedir();
  return file.startsWith("~/") ? join(homedir(), file.slice(2)) : file;
}

/**
 * `/flow report <runId> [FILE]`: writes the run's HTML report and says where it is. A relative FILE
 * is the session's, as every path in a session is: `cwd` is the session's folder, which need not be
 * the process's; one under `~` is the home folder's.
 */
export function reportLines(store: RunStore, rest: readonly string[], flowHome: string, cwd: string): string[] {
  const [runId, file] = rest;
  if (runId === undefined) throw new FlowError("request_invalid", "Name the run to report on: /flow report <runId> [FILE].");
  const id = assertRunId(runId);
  const target = file === undefined ? defaultReportPath(flowHome, id) : resolve(cwd, expandHome(file));
  saveReport(store, id, target);
  return [`Report of ${id} written to ${target}`, "Open it in a browser: one file, it loads nothing from the network."];
}
