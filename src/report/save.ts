import { join } from "node:path";
import { writePrivately, type RunStore } from "../runs/index.ts";
import { runReport } from "./page.ts";

/** Where `/flow report` puts a report when no file is named: the Flow home's reports folder. */
export const defaultReportPath = (flowHome: string, runId: string): string => join(flowHome, "reports", `${runId}.html`);

/**
 * Writes the report of `runId` to `target`, readable by its owner only (it holds the run's
 * answers), whole or not at all, and never through a link: the rules of `flow runs report --out`.
 * A failure (a folder named as the FILE, one the user cannot write, a link) is `request_invalid`,
 * said in /flow report's output rather than thrown past it (Pi then shows the user nothing).
 */
export function saveReport(store: RunStore, runId: string, target: string): void {
  writePrivately(target, runReport(store, runId));
}
