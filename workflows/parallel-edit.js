// parallel-edit: writers side by side, each editing one file in its own git worktree, so none sees
// or clobbers another's edit; then a merge step applies their changes to your working tree in
// order, each all or nothing, and reports what landed and what conflicted.
export const apiVersion = 1;
/** @satisfies {WorkflowMeta} */
export const meta = {
  name: "parallel-edit",
  description: "Writers in parallel, each editing one file in its own git worktree; then their changes applied in order, conflicts reported.",
  args: {
    type: "object",
    properties: {
      edits: {
        type: "array",
        minItems: 1,
        maxItems: 32,
        description: "One writer per edit, each in its own git worktree of the tree as you see it.",
        items: {
          type: "object",
          properties: {
            path: { type: "string", minLength: 1, description: "The file this writer edits, relative to the working directory." },
            task: { type: "string", minLength: 1, description: "What to change in it." },
          },
          required: ["path", "task"],
          additionalProperties: false,
        },
      },
      role: { type: "string", minLength: 1, description: "The writers' role. Default: worker." },
      concurrency: { type: "integer", minimum: 1, maximum: 8, description: "Writers at once. Default: 4." },
    },
    required: ["edits"],
    additionalProperties: false,
  },
  // The merge step applies the writers' changes: an action on runs, which a workflow takes only
  // when it names external_runs here.
  tools: ["external_runs"],
  limits: { agentCalls: 32, concurrency: 8 },
};

/** @param {WorkflowInput<"parallel-edit">} input */
export default async function runParallelEdit({ args }) {
  /** @typedef {{ path: string, runId: string | null, ok: true, summary: unknown } | { path: string, runId: string | null, ok: false, code: string, message: string }} Writer */
  const writers = await parallel(
    args.edits.map(({ path, task }) => () =>
      agent({
        role: args.role ?? "worker",
        description: `Edit ${path}`.slice(0, 200),
        context: { mode: "none" },
        isolation: "worktree",
        prompt: `Edit ${path}, and no other file: ${task}\n\nWhen you are done, say in one sentence what you changed.`,
      }).then(
        (run) => /** @type {Writer} */ ({ path, runId: run.runId, ok: true, summary: run.value }),
        (error) => /** @type {Writer} */ ({ path, runId: error.runId ?? null, ok: false, code: error.code ?? "failed", message: error.message }),
      ),
    ),
    { concurrency: args.concurrency ?? 4 },
  );

  // No writer finished: nothing to merge, and the run fails naming each writer's error.
  if (writers.every((writer) => !writer.ok)) {
    throw new Error(`every writer failed: ${writers.map((writer) => `${writer.path} (${writer.ok ? "" : `${writer.code}: ${writer.message}`})`).join("; ")}`);
  }

  // The merge step: the writers that finished, in the order given. A failed writer's partial edit
  // stays kept on its run (external_runs inspect view patch), never applied here.
  const done = writers.flatMap((writer) => (writer.ok && writer.runId ? [{ path: writer.path, runId: writer.runId }] : []));
  const answer = done.length > 0 ? await tools.external_runs({ action: "apply", runIds: done.map((writer) => writer.runId) }) : undefined;
  // A refused apply (session_unavailable in a session not saved to a file) landed nothing: every
  // writer's changes stay kept on its run, and a person lands them with /flow apply.
  const refused = answer !== undefined && !answer.ok ? answer.error : undefined;
  const results = (answer?.ok ? answer.data.results : undefined) ?? [];
  const landed = done.map((writer) => {
    const result = results.find((candidate) => candidate.runId === writer.runId);
    return { ...writer, status: refused ? "not_applied" : (result?.status ?? "nothing_to_apply"), files: result?.files ?? [] };
  });

  return {
    applied: landed.filter((writer) => writer.status === "applied").map(({ path, runId, files }) => ({ path, runId, files })),
    conflicts: landed.filter((writer) => writer.status === "conflict").map(({ path, runId, files }) => ({ path, runId, files })),
    unchanged: landed.filter((writer) => !["applied", "conflict", "not_applied"].includes(writer.status)).map(({ path, runId, status }) => ({ path, runId, status })),
    notApplied: landed.filter((writer) => writer.status === "not_applied").map(({ path, runId }) => ({ path, runId })),
    ...(refused
      ? { applyRefused: `${refused.code}: ${refused.message} Each writer's changes stay kept on its run: /flow apply ${done.map((writer) => writer.runId).join(" ")} lands them.` }
      : {}),
    failed: writers.flatMap((writer) => (writer.ok ? [] : [{ path: writer.path, runId: writer.runId, code: writer.code, message: writer.message }])),
    summaries: writers.flatMap((writer) => (writer.ok ? [{ path: writer.path, summary: writer.summary }] : [])),
  };
}
