import { Type, type Static, type TSchema } from "@sinclair/typebox";

/** The three ready-to-call `external_runs` argument objects a run view can carry. */
const InspectRef = (view: "summary" | "final" | "diagnostics") =>
  Type.Object(
    {
      action: Type.Literal("inspect"),
      runIds: Type.Array(Type.String(), { minItems: 1, maxItems: 1 }),
      view: Type.Literal(view),
    },
    { description: `Arguments for external_runs that inspect this run's ${view} view.` },
  );

export const RunStatusSchema = Type.Union(
  [
    Type.Literal("queued"),
    Type.Literal("running"),
    Type.Literal("done"),
    Type.Literal("interrupted_or_uncertain"),
  ],
  { description: "Lifecycle state. interrupted_or_uncertain: unfinished evidence and no live owner." },
);

export const RunOutcomeSchema = Type.Union(
  [Type.Literal("succeeded"), Type.Literal("failed"), Type.Literal("cancelled"), Type.Literal("timed_out")],
  { description: "Terminal outcome; present once status is done." },
);

export const IntegritySchema = Type.Union(
  [Type.Literal("complete"), Type.Literal("incomplete"), Type.Literal("damaged"), Type.Literal("unknown")],
  { description: "Evidence integrity of the run's journal." },
);

/**
 * What every receipt, batch inspection and list row says about one run. No private paths and no
 * launch or configuration details: those stay in the run's own evidence. `refs` is the served schema's.
 */
function runViewSchema<Refs extends TSchema>(refs: Refs) {
  return Type.Object(
    {
      runId: Type.String(),
      correlationId: Type.Optional(
        Type.String({
          description:
            "One ID for a whole line of work: a fresh run's own runId, kept by every resume (external_delegate resume, external_workflow resume) and shared by a workflow's children. Spans carry it as pi_flow.correlation_id.",
        }),
      ),
      kind: Type.Union([Type.Literal("agent"), Type.Literal("workflow")]),
      task: Type.Object({
        description: Type.String(),
        role: Type.Optional(Type.String()),
        subagentType: Type.Optional(Type.String()),
        harness: Type.Optional(Type.String()),
        workflow: Type.Optional(Type.String({ description: "Saved workflow name, or 'inline'." })),
        source: Type.Optional(
          Type.Union([Type.Literal("shipped"), Type.Literal("project"), Type.Literal("user"), Type.Literal("inline")], {
            description: "Where a workflow's script came from.",
          }),
        ),
        parentRunId: Type.Optional(Type.String({ description: "The workflow run that started this child." })),
        resumedFrom: Type.Optional(Type.String({ description: "Workflows: the interrupted run this one resumes (see external_workflow resume)." })),
      }),
      live: Type.Boolean({ description: "True when the live registry confirms an owner is running it." }),
      background: Type.Boolean(),
      state: Type.Object({
        status: RunStatusSchema,
        outcome: Type.Union([RunOutcomeSchema, Type.Null()]),
        error: Type.Optional(Type.Object({ code: Type.String(), message: Type.String() })),
      }),
      timing: Type.Object({
        startedAt: Type.String(),
        endedAt: Type.Optional(Type.String()),
        durationMs: Type.Optional(Type.Number()),
      }),
      integrity: IntegritySchema,
      output: Type.Object({
        finalAvailable: Type.Boolean({ description: "A complete canonical result exists." }),
        delivery: Type.Union([Type.Literal("inline"), Type.Literal("reference"), Type.Literal("none")], {
          description: "inline: the value is here. reference: page refs.final. none: no canonical result.",
        }),
        value: Type.Optional(Type.Unknown({ description: "The canonical result, when delivery is inline." })),
        redacted: Type.Optional(Type.Boolean()),
      }),
      refs,
      children: Type.Optional(
        Type.Object(
          {
            count: Type.Integer({ minimum: 0 }),
            failed: Type.Optional(Type.Integer({ minimum: 0 })),
            replayed: Type.Optional(Type.Integer({ minimum: 0, description: "A resumed run: agent() and tools.* calls answered from the journal of the run it resumes." })),
            live: Type.Optional(Type.Integer({ minimum: 0, description: "A resumed run: agent() and tools.* calls that ran." })),
          },
          { description: "Workflows only: indexed agent() children (replayed ones included), and failed agent() calls delivered to the script." },
        ),
      ),
      changes: Type.Optional(
        Type.Object(
          {
            files: Type.Integer({ minimum: 0 }),
            insertions: Type.Integer({ minimum: 0 }),
            deletions: Type.Integer({ minimum: 0 }),
          },
          { description: 'isolation "worktree": what the child changed in its worktree, kept for external_runs apply (and view patch); absent when it changed nothing.' },
        ),
      ),
      usage: Type.Optional(
        Type.Object({
          turns: Type.Optional(Type.Integer()),
          toolCalls: Type.Optional(Type.Integer()),
          inputTokens: Type.Optional(Type.Integer()),
          outputTokens: Type.Optional(Type.Integer()),
          cacheReadTokens: Type.Optional(Type.Integer({ description: "Prompt tokens read from the provider's cache." })),
          cacheWriteTokens: Type.Optional(Type.Integer({ description: "Prompt tokens written to the provider's cache." })),
          costUsd: Type.Optional(Type.Number({ minimum: 0, description: "Cost in US dollars: reported by the harness, or priced from Pi's model catalog. A workflow sums its children." })),
        }),
      ),
    },
    { description: "One run, as supervision sees it." },
  );
}

const RefsSchema = Type.Object(
  {
    summary: InspectRef("summary"),
    final: Type.Optional(InspectRef("final")),
    diagnostics: Type.Optional(InspectRef("diagnostics")),
  },
  { description: "Ready-to-call external_runs arguments for this run." },
);

export const RunViewSchema = runViewSchema(RefsSchema);
/**
 * The run of an external_delegate or external_workflow receipt: as RunViewSchema, but `refs` is
 * absent in a session not saved to a file, where no external_runs call can resolve them.
 */
export const ReceiptRunViewSchema = runViewSchema(
  Type.Optional(
    Type.Object(RefsSchema.properties, {
      description:
        "Ready-to-call external_runs arguments for this run. Absent in a session not saved to a file, where external_runs cannot answer.",
    }),
  ),
);

export type RunView = Static<typeof RunViewSchema>;
/** A receipt's run view: `refs` left out where no external_runs call could resolve them. */
export type ServedRunView = Static<typeof ReceiptRunViewSchema>;

/** The view a receipt serves: without refs in a session external_runs cannot supervise (contract: "where they resolve"). */
export function servedView(view: RunView, supervised: boolean): ServedRunView {
  if (supervised) return view;
  const { refs: _unresolvable, ...served } = view;
  return served;
}

/**
 * A usage number (a count, or a cost in dollars) as it counts when read from what anyone may have
 * written (a CLI's stream, a cassette, a record on disk): a finite number from 0 up, else 0, so a
 * string never becomes markup or throws, and no sum becomes Infinity.
 */
export const usageAmount = (value: unknown): number => (typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : 0);
export type RunStatus = Static<typeof RunStatusSchema>;
export type RunOutcome = Static<typeof RunOutcomeSchema>;
export type Integrity = Static<typeof IntegritySchema>;
