// example:paged-final
const targetRunId = load("flow.targetRunId");
let cursor;
let encoding;
let raw = "";
do {
  const res = await tools.external_runs({
    action: "inspect",
    runIds: [targetRunId],
    view: "final",
    limitBytes: 64,
    ...(cursor ? { cursor } : {}),
  });
  if (!res.ok) return { ok: false, error: res.error };
  if (res.data.mode !== "single" || !res.data.finalAvailable) {
    return { ok: false, finalAvailable: false };
  }
  encoding = res.data.page.encoding;
  raw += res.data.page.text;
  cursor = res.data.page.nextCursor;
} while (cursor);
const value = encoding === "json" ? JSON.parse(raw).result : raw;
return { ok: true, runId: targetRunId, encoding, value };
