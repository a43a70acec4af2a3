import { Type, type Static } from "@sinclair/typebox";
import { envelopeSchema } from "./envelope.ts";
import { ReceiptRunViewSchema } from "./run-schema.ts";

export const ContextSchema = Type.Union(
  [
    Type.Object({ mode: Type.Literal("none") }, { description: "The child sees only its prompt." }),
    Type.Object(
      {
        mode: Type.Literal("recent"),
        turns: Type.Integer({ minimum: 1, description: "How many of the parent's latest turns the child sees." }),
      },
      { description: "The child sees the parent's last N turns, frozen when the call started." },
    ),
    Type.Object({ mode: Type.Literal("full") }, { description: "The child sees the parent's whole branch, frozen when the call started." }),
  ],
  { description: "What the child sees of the parent conversation. The pending tool call is never part of it." },
);

/** Properties every selector branch repeats, so describeTool renders each branch whole. */
function sharedProperties() {
  return {
    description: Type.String({ minLength: 1, maxLength: 200, description: "A short label for the run (3-10 words)." }),
    prompt: Type.String({ minLength: 1, description: "The child's task, self-contained unless context asks for history." }),
    context: Type.Optional(ContextSchema),
    background: Type.Optional(
      Type.Boolean({ description: "true: return once the run is accepted; the run outlives this call. Default false." }),
    ),
    model: Type.Optional(Type.String({ description: "provider/model-id for the child; default: the parent's model." })),
    outputSchema: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description: "A JSON Schema the child's final answer must satisfy; the answer is then parsed JSON.",
      }),
    ),
    timeoutMs: Type.Optional(Type.Integer({ minimum: 1000, description: "Wall-time limit for the child, in milliseconds." })),
    cwd: Type.Optional(Type.String({ description: "Working directory for the child; default: the session's." })),
    isolated: Type.Optional(
      Type.Boolean({ description: "true: the child loads no extension or MCP server of the user or the project, only the tools pi-flow gives it. Default false." }),
    ),
    isolation: Type.Optional(
      Type.Literal("worktree", {
        description:
          "worktree: the child works in its own git worktree of your tree (uncommitted files included); its changes wait for external_runs apply (for /flow apply <runId> in a session not saved to a file).",
      }),
    ),
    maxTurns: Type.Optional(
      Type.Integer({ minimum: 1, description: "Most model turns the child may take; the next one stops it and the run fails, naming the quota." }),
    ),
    maxToolCalls: Type.Optional(
      Type.Integer({ minimum: 1, description: "Most tool calls the child may start; the next one is refused, stops it, and the run fails." }),
    ),
    resume: Type.Optional(
      Type.String({
        description:
          "A settled agent run of this session to continue, with its whole conversation and on its harness: the prompt is its next message. Wait for a live run to settle (a running pi child takes steers).",
      }),
    ),
  };
}

const RoleBranch = Type.Object(
  {
    role: Type.String({ description: "A Flow role: worker, explorer, reviewer, or one from role files." }),
    harness: Type.Optional(
      Type.String({
        description:
          "Who runs the child: pi (default, in-process), claude (Claude Code CLI), codex (Codex CLI), replay (answers from a recorded cassette, no model call) or stub (a value generated from outputSchema, no model call).",
      }),
    ),
    ...sharedProperties(),
  },
  { additionalProperties: false, description: "Select the child by Flow role." },
);

const SubagentBranch = Type.Object(
  {
    subagent_type: Type.String({ description: "A Pi agent definition (markdown with frontmatter); always the pi harness." }),
    ...sharedProperties(),
  },
  { additionalProperties: false, description: "Select the child by Pi agent definition." },
);

export const DelegateInputSchema = Type.Union([RoleBranch, SubagentBranch], {
  not: {
    anyOf: [{ required: ["role", "subagent_type"] }, { required: ["subagent_type", "harness"] }],
  },
});

export type DelegateInput = Static<typeof RoleBranch> | Static<typeof SubagentBranch>;

const RunData = Type.Object({ run: ReceiptRunViewSchema });
const MaybeRunData = Type.Object({ run: Type.Union([ReceiptRunViewSchema, Type.Null()]) });

export const DelegateOutputSchema = envelopeSchema("external_delegate", Type.Literal("delegate"), RunData, MaybeRunData);
