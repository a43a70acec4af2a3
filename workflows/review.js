// review: independent reviewers, one per lens, in parallel; then one synthesis of their verdicts.
// Each reviewer sees only the target and its own lens (context none), never another's verdict;
// the synthesis gets the verdicts as an untrusted evidence packet in its prompt.
export const apiVersion = 1;
/** @satisfies {WorkflowMeta} */
export const meta = {
  name: "review",
  description: "Independent reviewers, one per lens, in parallel; then a synthesis of their verdicts.",
  args: {
    type: "object",
    properties: {
      target: { type: "string", minLength: 1, description: "What to review: paths, a diff, a design. Reviewers see only this and their lens." },
      lenses: {
        type: "array",
        items: { type: "string", minLength: 1 },
        minItems: 1,
        maxItems: 8,
        description: "One independent reviewer per lens. Default: correctness, tests, simplicity.",
      },
    },
    required: ["target"],
    additionalProperties: false,
  },
  limits: { agentCalls: 9, concurrency: 4 },
};

/** @param {WorkflowInput<"review">} input */
export default async function runReview({ args }) {
  const lenses = args.lenses ?? ["correctness", "tests", "simplicity"];

  // A failed reviewer does not sink the review: the synthesis is told which lens is missing.
  const reviews = await parallel(
    lenses.map((lens) => () =>
      agent({
        role: "reviewer",
        description: `Review ${lens}`.slice(0, 200),
        context: { mode: "none" },
        prompt: `Review the following for ${lens} only. Give a verdict first (approve, request changes, or cannot tell), then your reasons with evidence.\n\nTarget:\n${args.target}`,
      }).then(
        (run) => ({ lens, runId: run.runId, verdict: run.value }),
        (error) => ({ lens, runId: error.runId ?? null, error: error.code ?? "failed" }),
      ),
    ),
  );

  const failed = reviews.flatMap((review) => ("error" in review ? [review] : []));
  const verdicts = reviews.flatMap((review) => ("error" in review ? [] : [review]));
  if (verdicts.length === 0) throw new Error(`every reviewer failed: ${failed.map((r) => `${r.lens} (${r.error})`).join(", ")}`);
  const missing = failed.map((review) => review.lens);

  const synthesis = await agent({
    role: "reviewer",
    description: "Synthesize the review",
    context: { mode: "none" },
    prompt: [
      `Independent reviewers examined the target below, each through one lens. Combine their verdicts into one: an overall verdict first, then the findings that matter most, noting where reviewers disagree.`,
      missing.length > 0 ? `No verdict is available for: ${missing.join(", ")}. Say so.` : "",
      `Target:\n${args.target}`,
      handoff(verdicts.map(({ lens, runId, verdict }) => ({ lens, runId, verdict })), { maxChars: 48000 }),
    ].filter((part) => part !== "").join("\n\n"),
  });

  return { target: args.target, reviews, synthesis: { runId: synthesis.runId, verdict: synthesis.value } };
}
