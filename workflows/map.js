// map: one prompt fanned out over items, at most `concurrency` children at once, results in item
// order. A failed item is reported in its slot instead of failing the whole map.
export const apiVersion = 1;
/** @satisfies {WorkflowMeta} */
export const meta = {
  name: "map",
  description: "One prompt fanned out over items with a concurrency limit, collecting (structured) results in item order.",
  args: {
    type: "object",
    properties: {
      items: { type: "array", items: { type: "string" }, minItems: 1, maxItems: 100, description: "One child per item." },
      prompt: {
        type: "string",
        minLength: 1,
        description: "The task for every item. {{item}} is replaced by the item; without it the item is appended.",
      },
      role: { type: "string", minLength: 1, description: "The children's role. Default: explorer." },
      concurrency: { type: "integer", minimum: 1, maximum: 8, description: "Children at once. Default: 4." },
      outputSchema: { type: "object", description: "JSON Schema every child's answer must satisfy; value is then the parsed JSON." },
    },
    required: ["items", "prompt"],
    additionalProperties: false,
  },
  limits: { agentCalls: 100, concurrency: 8 },
};

/** @param {WorkflowInput<"map">} input */
export default async function runMap({ args }) {
  /** @param {string} item */
  const taskFor = (item) =>
    args.prompt.includes("{{item}}") ? args.prompt.split("{{item}}").join(item) : `${args.prompt}\n\nItem:\n${item}`;

  const results = await parallel(
    args.items.map((item, index) => () =>
      agent({
        role: args.role ?? "explorer",
        description: `Map item ${index + 1}: ${item}`.slice(0, 200),
        context: { mode: "none" },
        prompt: taskFor(item),
        ...(args.outputSchema ? { outputSchema: args.outputSchema } : {}),
      }).then(
        (run) => ({ item, ok: true, runId: run.runId, value: run.value }),
        (error) => ({ item, ok: false, runId: error.runId ?? null, code: error.code ?? "failed", message: error.message }),
      ),
    ),
    { concurrency: args.concurrency ?? 4 },
  );

  return { results, failed: results.filter((result) => !result.ok).length };
}
