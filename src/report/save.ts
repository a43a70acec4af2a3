import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { FlowError } from "../contract/errors.ts";
import { atomicWriteFile, errorCode, type RunStore } from "../runs/index.ts";
import { runReport } from "./page.ts";

/** Where `/flow report` puts a report when no file is named: the Flow home's reports folder. */
export const defaultReportPath = (flowHome: string, runId: string): string => join(flowHome, "reports", `${runId}.html`);

/**
 * Writes the report of `runId` to `target`, readable by its owner only (it holds the run's
 * answers), whole or not at all: a temporary file beside it, renamed over it.
 */
export function saveReport(store: RunStore, runId: string, target: string): void {
  const page = runReport(store, runId);
  try {
    mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
    atomicWriteFile(target, page, { durable: false });
  } catch (error) {
    // A folder named as the FILE, or one the user cannot write: said in /flow report's output, as
    // `flow runs report --out` says it, rather than thrown past it (Pi then shows the user nothing).
    throw new FlowError("request_invalid", `Cannot write ${target} (${errorCode(error) ?? "error"}).`);
  }
}
