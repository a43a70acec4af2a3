// triage: a workflow of one's own, to try with no model first (flow run … --stub), then with a
// hand-written cassette (answers.jsonl), then on a model.
export const apiVersion = 1;
export const meta = {
  name: "triage",
  description: "Two reviewers rate an issue in parallel; the worse rating wins, with a summary.",
  args: {
    type: "object",
    properties: { issue: { type: "string", minLength: 1, description: "The issue to triage." } },
    additionalProperties: false,
  },
};

const rating = {
  type: "object",
  properties: {
    severity: { enum: ["low", "medium", "high"] },
    score: { type: "integer", minimum: 1, maximum: 5 },
    reasons: { type: "array", items: { type: "string", minLength: 1 }, minItems: 1 },
  },
  required: ["severity", "score", "reasons"],
  additionalProperties: false,
};

export default async function triage({ args }) {
  const issue = args.issue ?? "The login page rejects passwords longer than 64 characters.";
  const ratings = await parallel(
    ["user impact", "security"].map((lens) => () =>
      agent({
        role: "reviewer",
        description: `Rate ${lens}`,
        context: { mode: "none" },
        prompt: `Rate this issue for ${lens}:\n${issue}`,
        outputSchema: rating,
      }),
    ),
  );
  const worst = ratings.map((run) => run.value).sort((a, b) => b.score - a.score)[0];
  const summary = await agent({ role: "explorer", description: "Summarize", context: { mode: "none" }, prompt: `Summarize in one line: ${issue}` });
  return { severity: worst.severity, score: worst.score, reasons: worst.reasons, summary: summary.output };
}
