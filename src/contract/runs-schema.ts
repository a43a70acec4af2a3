import { Type, type Static } from "@sinclair/typebox";
import { envelopeSchema } from "./envelope.ts";
import { RunViewSchema } from "./run-schema.ts";

export const RUN_ACTIONS = ["list", "inspect", "wait", "cancel", "steer", "apply", "discard"] as const;
export const RUN_VIEWS = ["summary", "launch", "output", "diagnostics", "final", "patch", "calls"] as const;

const literals = <T extends string>(values: readonly T[]) => values.map((value) => Type.Literal(value));

/**
 * Target counts, view/action combinations and ID formats are checked in execute, so that they come
 * back as typed `request_invalid` receipts.
 */
export const RunsInputSchema = Type.Object(
  {
    action: Type.Union(literals(RUN_ACTIONS), { description: "list, inspect, wait, cancel, steer, apply or discard." }),
    runIds: Type.Optional(
      Type.Array(Type.String(), {
        description: "Targets: inspect (one for a page view, many for summary), wait, cancel (one), steer (one), apply and discard (one or more, in order).",
      }),
    ),
    view: Type.Optional(
      Type.Union(literals(RUN_VIEWS), { description: 'inspect view; default summary. patch: what an isolation "worktree" child changed, as a git patch (redacted). calls: a workflow\'s agent() and tools.* calls, from its journal.' }),
    ),
    limitBytes: Type.Optional(Type.Integer({ minimum: 1, description: "Byte budget of a page or a wait's output; for list, of each stream's inline values." })),
    cursor: Type.Optional(Type.String({ description: "Continue a list (runs stream) or inspect cursor sequence." })),
    workflowCursor: Type.Optional(Type.String({ description: "Continue the workflows stream of a list." })),
    limit: Type.Optional(Type.Integer({ minimum: 1, description: "list: rows per stream." })),
    mode: Type.Optional(
      Type.Union([Type.Literal("all"), Type.Literal("any")], { description: "wait: return when all or any target settles." }),
    ),
    timeoutMs: Type.Optional(Type.Integer({ minimum: 0, description: "wait: give up after this long; pending runs go on." })),
    message: Type.Optional(
      Type.String({ description: "steer: a message for the running child, delivered after its active tool calls, before its next model request." }),
    ),
  },
  { additionalProperties: false },
);

export type RunsInput = Static<typeof RunsInputSchema>;

export const PageSchema = Type.Object({
  text: Type.String(),
  encoding: Type.Union([Type.Literal("json"), Type.Literal("text")]),
  complete: Type.Boolean(),
  nextCursor: Type.Optional(Type.String()),
});

export const ListPayloadSchema = Type.Object({
  runs: Type.Array(RunViewSchema),
  workflows: Type.Array(RunViewSchema),
  nextCursor: Type.Optional(Type.String()),
  nextWorkflowCursor: Type.Optional(Type.String()),
});

export const BatchPayloadSchema = Type.Object({
  mode: Type.Literal("batch"),
  entries: Type.Array(RunViewSchema),
  nextCursor: Type.Optional(Type.String()),
});

export const SinglePayloadSchema = Type.Object({
  mode: Type.Literal("single"),
  runId: Type.String(),
  view: Type.Union(literals(RUN_VIEWS)),
  page: PageSchema,
  finalAvailable: Type.Optional(Type.Boolean()),
  outputStatus: Type.Optional(Type.String()),
});

export const WaitPayloadSchema = Type.Object({
  mode: Type.Union([Type.Literal("all"), Type.Literal("any")]),
  completed: Type.Array(RunViewSchema),
  pending: Type.Array(Type.String({ description: "Run IDs still running; they were not cancelled." })),
});

export const CancelPayloadSchema = Type.Object({
  runId: Type.String(),
  status: Type.Union([Type.Literal("requested"), Type.Literal("terminal")], {
    description: "requested does not mean the run has stopped.",
  }),
});

export const SteerPayloadSchema = Type.Object({
  runId: Type.String(),
  status: Type.Union([Type.Literal("queued"), Type.Literal("terminal"), Type.Literal("unsupported"), Type.Literal("refused"), Type.Literal("not_started")], {
    description:
      "queued: the message is queued; the child has not necessarily read it yet. terminal: the run has ended or is ending; nothing was delivered: wait for it, then resume it. unsupported: the child's harness (claude, codex) cannot be steered; nothing was delivered. refused: the run's steering budget is spent, or a fleet child's database did not take the message (see reason); nothing was delivered. not_started: a background run still waits for a slot; nothing was delivered, steer it once it runs.",
  }),
  held: Type.Boolean({ description: "True when the child's session did not exist yet: the message is delivered when it starts." }),
  reason: Type.Optional(Type.String({ description: "refused: the bound the steer met (or the database's refusal) and when steering works again. not_started on the dbos backend: what the run waits for." })),
});

export const ChangesPayloadSchema = Type.Object({
  results: Type.Array(
    Type.Object({
      runId: Type.String(),
      status: Type.Union(
        [Type.Literal("applied"), Type.Literal("conflict"), Type.Literal("nothing_to_apply"), Type.Literal("already_applied"), Type.Literal("discarded")],
        {
          description:
            "applied: the run's changes were merged onto the working tree (nothing staged). conflict: they conflict with it; nothing changed. nothing_to_apply: the run kept no changes (or they were discarded). already_applied: applied before. discarded: dropped (discard).",
        },
      ),
      files: Type.Optional(Type.Array(Type.String(), { description: "applied: the files written or deleted. conflict: the conflicting files. The first 200." })),
      moreFiles: Type.Optional(Type.Integer({ minimum: 1, description: "How many more files than the 200 listed (an applied run's evidence lists them all)." })),
      reason: Type.Optional(Type.String({ description: "conflict: why, when git found no conflict (files the working tree ignores in the way, a link into .git); nothing changed." })),
      review: Type.Optional(
        Type.Array(Type.Object({ path: Type.String(), why: Type.String() }), {
          description:
            "applied: the files it wrote that make tools run code or reach out of the tree (git hooks and drivers, .envrc, CI workflows, editor tasks, changed npm scripts, links out of the working tree, files made executable), and why: read them before running anything. The envelope warns changes_need_review.",
        }),
      ),
    }),
  ),
});

export const RunsOutputSchema = envelopeSchema(
  "external_runs",
  Type.Union(literals(RUN_ACTIONS)),
  Type.Union([ListPayloadSchema, BatchPayloadSchema, SinglePayloadSchema, WaitPayloadSchema, CancelPayloadSchema, SteerPayloadSchema, ChangesPayloadSchema]),
  Type.Null(),
);
