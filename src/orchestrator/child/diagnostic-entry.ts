// A harness reports what its child did as typed diagnostics; the run's diagnostics log keeps each
// as one leveled line. Kept apart from launch-child.ts, which only wires the child to its run.
import type { ChildDiagnostic } from "../../harnesses/types.ts";
import type { DiagnosticEntry } from "../../runs/index.ts";

/** A harness's diagnostic as one line of the run's diagnostics log. */
export function diagnosticEntry(entry: ChildDiagnostic): DiagnosticEntry {
  switch (entry.type) {
    case "error":
      return { level: "error", message: entry.message };
    case "tool_call":
      return { level: "info", message: `tool ${entry.tool} ${entry.args}` };
    case "tool_result":
      return { level: entry.isError ? "warn" : "debug", message: `tool ${entry.tool} ${entry.isError ? "failed" : "done"}` };
    case "session":
      return { level: "info", code: "cli_session", message: `${entry.harness} session ${entry.sessionId}` };
    case "stderr":
      return { level: "warn", code: "stderr", message: entry.text };
    case "stub":
      return { level: "warn", code: "stubbed", message: entry.message };
    case "takeover":
      return { level: "info", code: "takeover", message: entry.message };
    case "narrowed":
      return { level: "warn", code: entry.code, message: entry.message };
  }
}
