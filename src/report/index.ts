/** The run report: one self-contained HTML page of a run and every run it started. See docs/observability.md. */
export { runReport, renderReport } from "./page.ts";
export { collectReport, type ReportData, type ReportRun } from "./collect.ts";
export { defaultReportPath, saveReport } from "./save.ts";
