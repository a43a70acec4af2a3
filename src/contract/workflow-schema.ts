import { Type, type Static } from "@sinclair/typebox";
import { envelopeSchema } from "./envelope.ts";
import { ReceiptRunViewSchema } from "./run-schema.ts";

/**
 * Exactly one of `workflow`, `script` and `resume` is required. The rule is checked in execute, so that
 * both or neither come back as a typed `request_invalid` receipt rather than a thrown validation error.
 */
export const WorkflowInputSchema = Type.Object(
  {
    workflow: Type.Optional(
      Type.String({ minLength: 1, description: "A saved workflow's name (shipped, project .pi/flow/workflows/, or user)." }),
    ),
    script: Type.Optional(
      Type.String({ minLength: 1, description: "Inline workflow source; apiVersion and meta exports are optional." }),
    ),
    args: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), { description: "Arguments, validated against the workflow's meta.args." }),
    ),
    description: Type.Optional(Type.String({ maxLength: 200, description: "A short label for the run." })),
    resume: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          "A workflow run ID of this project that was interrupted, cancelled or timed out: run its script again from its journal, answering every call that had settled without running it. Not with workflow, script or args.",
      }),
    ),
    background: Type.Optional(
      Type.Boolean({ description: "true: return once the run is accepted; wait with external_runs (in a session not saved to a file, for the completion message that follows when it settles). Default false." }),
    ),
  },
  { additionalProperties: false, description: "Give exactly one source: workflow, script, or resume (an interrupted run)." },
);

export type WorkflowInput = Static<typeof WorkflowInputSchema>;

const RunData = Type.Object({ run: ReceiptRunViewSchema });
const MaybeRunData = Type.Object({ run: Type.Union([ReceiptRunViewSchema, Type.Null()]) });

export const WorkflowOutputSchema = envelopeSchema("external_workflow", Type.Literal("run"), RunData, MaybeRunData);
