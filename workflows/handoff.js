// handoff: collect evidence with one child, then have an independent reviewer judge a bounded,
// provenance-stamped packet of it. The reviewer sees the packet and its task, nothing else.
export const apiVersion = 1;
/** @satisfies {WorkflowMeta} */
export const meta = {
  name: "handoff",
  description: "Collect evidence, then an independent review of a bounded, provenance-stamped evidence packet.",
  args: {
    type: "object",
    properties: {
      collectPrompt: { type: "string", minLength: 1, description: "The task of the explorer that collects the evidence." },
      reviewPrompt: { type: "string", minLength: 1, description: "The reviewer's task; the evidence packet follows it." },
      maxChars: { type: "integer", minimum: 100, maximum: 200000, description: "Evidence characters the packet keeps. Default: 12000." },
    },
    required: ["collectPrompt", "reviewPrompt"],
    additionalProperties: false,
  },
  limits: { agentCalls: 2, concurrency: 1 },
};

/** @param {WorkflowInput<"handoff">} input */
export default async function runHandoff({ args }) {
  const maxChars = args.maxChars ?? 12000;
  const collected = await agent({
    role: "explorer",
    description: "Collect evidence",
    context: { mode: "none" },
    prompt: args.collectPrompt,
  });

  // agent() gives the whole answer, even one too large for a receipt; handoff() bounds it.
  const evidence = typeof collected.value === "string" ? collected.value : JSON.stringify(collected.value);
  const packet = handoff(evidence, { maxChars, source: collected }); // stamps runId and observedAt

  const reviewed = await agent({
    role: "reviewer",
    description: "Review the evidence",
    context: { mode: "none" },
    prompt: `${args.reviewPrompt}\n\n${packet}`,
  });

  return {
    collect: { runId: collected.runId, chars: evidence.length },
    review: { runId: reviewed.runId, verdict: reviewed.value },
    omittedChars: Math.max(0, evidence.length - maxChars),
  };
}
