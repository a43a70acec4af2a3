// example:batch-inspect
const runIds = load("flow.runIds");
const entries = [];
let cursor;
do {
  const page = await tools.external_runs({
    action: "inspect",
    runIds,
    view: "summary",
    limitBytes: 32768,
    ...(cursor ? { cursor } : {}),
  });
  if (!page.ok) return { ok: false, error: page.error };
  if (page.data.mode !== "batch") throw new Error("Expected batch summary");
  entries.push(...page.data.entries);
  cursor = page.data.nextCursor;
} while (cursor);
return entries.map((run) => ({
  runId: run.runId,
  status: run.state.status,
  outcome: run.state.outcome,
  finalAvailable: run.output.finalAvailable,
}));
