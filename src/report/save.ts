import { randomBytes } from "node:crypto";
import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { RunStore } from "../runs/index.ts";
import { runReport } from "./page.ts";

/** Where `/flow report` puts a report when no file is named: the Flow home's reports folder. */
export const defaultReportPath = (flowHome: string, runId: string): string => join(flowHome, "reports", `${runId}.html`);

/**
 * Writes the report of `runId` to `target`, readable by its owner only (it holds the run's
 * answers), whole or not at all: a temporary file beside it, renamed over it.
 */
export function saveReport(store: RunStore, runId: string, target: string): void {
  const page = runReport(store, runId);
  mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
  // A fresh name, created exclusively: a link planted where the temporary file goes (a child in the
  // project can guess a name made of the pid alone) is refused, never written through.
  const temp = join(dirname(target), `.${basename(target)}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    writeFileSync(temp, page, { mode: 0o600, flag: "wx" });
    renameSync(temp, target);
  } finally {
    rmSync(temp, { force: true });
  }
}
