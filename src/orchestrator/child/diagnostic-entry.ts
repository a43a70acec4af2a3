// A harness reports what its child did as typed diagnostics; the run's diagnostics log keeps each
// as one leveled line. Kept apart from launch-child.ts, which only wires the child to its run.
import type { ChildDiagnostic } from "../../harnesses/index.ts";
import type { DiagnosticEntry } from "../../runs/index.ts";

/** How a call's id shows in its lines, `[id]`: what tells overlapping calls of one tool apart. As long as a span's id attribute, at most. */
const callId = (id: string | undefined): string => (id ? ` [${id.length > 256 ? `${id.slice(0, 256)}…` : id}]` : "");

/** A harness's diagnostic as one line of the run's diagnostics log. */
export function diagnosticEntry(entry: ChildDiagnostic): DiagnosticEntry {
  switch (entry.type) {
    case "error":
      return { level: "error", message: entry.message };
    case "tool_call":
      return { level: "info", message: `tool ${entry.tool}${callId(entry.id)} ${entry.args}` };
    case "tool_result":
      return { level: entry.isError ? "warn" : "debug", message: `tool ${entry.tool}${callId(entry.id)} ${entry.isError ? "failed" : "done"}` };
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
