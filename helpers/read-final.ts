// readFinal(): the complete final value of a run view, paging by-reference results to the end.
import type { HelperDefinition } from "./types.ts";

export const readFinal: HelperDefinition = {
  name: "readFinal",
  signature: "readFinal<T = unknown>(run: RunView, options?: ReadFinalOptions): Promise<T>",
  description:
    "Returns a run's whole final value: inline, `run.output.value`; by reference, the pages of " +
    "`tools.external_runs({ ...run.refs.final, limitBytes, cursor })` to the last `nextCursor`, joined (the parsed " +
    "`.result` for `encoding: \"json\"`). Throws a FlowError: a failed page's code; `final_unavailable`: " +
    "no final value; `session_unavailable`: no refs (session not saved to a file; agent() returns whole values).",
  source: String.raw`async function readFinal(run, options) {
  if (run === null || typeof run !== "object") throw new TypeError("readFinal(run): run must be a run view (receipt.data.run)");
  const output = run.output ?? {};
  if (output.delivery === "inline") return output.value;
  if (output.finalAvailable === false) throw new FlowError("run " + run.runId + " has no final value", "final_unavailable", run.runId);
  const ref = run.refs?.final;
  // A receipt of a session not saved to a file carries no refs: external_runs refuses that session.
  if (run.refs === undefined && output.delivery === "reference") {
    throw new FlowError("run " + run.runId + "'s final value is over 16 KiB and this session is not saved to a file, so external_runs cannot page it: agent() returns a child's whole value, or run the session saved to a file", "session_unavailable", run.runId);
  }
  if (ref === null || typeof ref !== "object") throw new FlowError("run " + run.runId + " has no refs.final", "final_unavailable", run.runId);
  if (!("external_runs" in tools)) throw new TypeError("readFinal needs tools.external_runs; add it to meta.tools");
  const limitBytes = options?.limitBytes ?? 65536;
  const maxPages = options?.maxPages ?? 1000;
  let raw = "";
  let encoding = "text";
  let cursor;
  let pages = 0;
  do {
    if (++pages > maxPages) throw new FlowError("readFinal: more than " + maxPages + " pages", "final_too_large", run.runId);
    const res = await tools.external_runs(cursor === undefined ? { ...ref, limitBytes } : { ...ref, limitBytes, cursor });
    if (res === null || typeof res !== "object" || res.ok !== true) {
      const error = res?.error ?? {};
      throw new FlowError(error.message ?? "external_runs failed", error.code ?? "failed", run.runId);
    }
    const data = res.data;
    if (data?.mode !== "single" || data.page === null || typeof data.page !== "object") {
      throw new FlowError("external_runs did not return a single-run page", "request_invalid", run.runId);
    }
    if (data.finalAvailable === false) throw new FlowError("run " + run.runId + " has no final value", "final_unavailable", run.runId);
    encoding = data.page.encoding;
    raw += data.page.text;
    cursor = data.page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return encoding === "json" ? parse(raw).result : raw;
}`,
};
