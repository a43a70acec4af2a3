import { FlowError } from "../contract/errors.ts";
import type { RunView } from "../contract/run-schema.ts";
import { readFinalValue } from "./journal/evidence.ts";
import { resolveFacts, type FactsContext } from "./read/facts.ts";
import { groupCommit } from "./write/group-commit.ts";
import { makeScope, runFiles, scopeToken, type RunScope } from "./home.ts";
import { assertRunId } from "./ids.ts";
import {
  assertTargets,
  assertView,
  inspectBatch,
  inspectSingle,
  inspectTail,
  type BatchPayload,
  type RunViewName,
  type SinglePayload,
} from "./read/inspect.ts";
import { listRuns, MAX_LIST_LIMIT, type ListOptions, type ListPayload } from "./read/list.ts";
import { processRegistry, type RunRegistry } from "./registry.ts";
import { readRecord } from "./journal/record.ts";
import { readTerminalLine } from "./journal/journal-ends.ts";
import { DEFAULT_RETENTION, prune, type PruneReport, type RetentionPolicy } from "./retention.ts";
import { ownerAlive } from "./live-sessions.ts";
import { ownIdentity } from "./process-identity.ts";
import { buildView, formatRunText } from "./read/view.ts";
import { RunWriter, type CreateRunInput, type WriterHooks } from "./write/writer.ts";

export interface RunStoreOptions {
  /** The Flow home (see `resolveFlowHome`). */
  home: string;
  /** The session's working directory; its real path selects the project. */
  cwd: string;
  /** Pi's session ID; selects the session partition. */
  sessionId: string;
  /** Defaults to the process-wide registry; tests pass their own. */
  registry?: RunRegistry;
  /** Test seam: called at named points of the write path. */
  hooks?: WriterHooks;
}

export interface PageOptions {
  limitBytes?: number;
  cursor?: string;
}

export interface InspectInput extends PageOptions {
  runIds: unknown;
  view?: unknown;
}

export interface CancelPayload {
  runId: string;
  status: "requested" | "terminal";
}

/**
 * The facade the tools talk to: one store per (project, session). Every ID passes `assertRunId`
 * before anything touches a path; a run outside this scope is `run_unavailable`, exactly like an
 * unknown or pruned one.
 */
export class RunStore {
  readonly scope: RunScope;
  readonly registry: RunRegistry;
  private readonly ctx: FactsContext & { hooks: WriterHooks };

  constructor(opts: RunStoreOptions) {
    this.scope = makeScope(opts.home, opts.cwd, opts.sessionId);
    this.registry = opts.registry ?? processRegistry();
    this.ctx = { scope: this.scope, scopeToken: scopeToken(this.scope), registry: this.registry, hooks: opts.hooks ?? {} };
  }

  /** Start a run: evidence first, then registration. `storage_unavailable` if the journal cannot be written. */
  create(input: CreateRunInput): RunWriter {
    return RunWriter.create(this.ctx, input);
  }

  view(runId: unknown): RunView {
    return buildView(resolveFacts(this.ctx, assertRunId(runId)));
  }

  /**
   * A succeeded run's canonical value (redacted as written), from memory, the record or terminal line, or its final file; not
   * ok when the run has none or it cannot be read. A resumed workflow answers agent() from this.
   */
  finalValue(runId: unknown): { ok: true; value: unknown } | { ok: false } {
    const facts = resolveFacts(this.ctx, assertRunId(runId));
    const final = facts.final;
    if (!final) return { ok: false };
    return final.where === "value" ? { ok: true, value: final.final.value } : readFinalValue(final.path, final.meta.format);
  }

  /** The model-facing text of one run. */
  text(runId: unknown): string {
    return formatRunText(this.view(runId));
  }

  list(opts: ListOptions = {}): ListPayload {
    return listRuns(this.ctx, opts);
  }

  /** Every run of this store: both list streams (runs, workflows) walked to their ends. */
  listEvery(): RunView[] {
    const views: RunView[] = [];
    let cursor: string | undefined;
    do {
      const page = this.list({ limit: MAX_LIST_LIMIT, ...(cursor ? { cursor } : {}) });
      views.push(...page.runs);
      cursor = page.nextCursor;
    } while (cursor);
    let workflowCursor: string | undefined;
    do {
      const page = this.list({ limit: MAX_LIST_LIMIT, ...(workflowCursor ? { workflowCursor } : {}) });
      views.push(...page.workflows);
      workflowCursor = page.nextWorkflowCursor;
    } while (workflowCursor);
    return views;
  }

  inspectBatch(runIds: unknown, opts: PageOptions = {}): BatchPayload {
    return inspectBatch(this.ctx, runIds, opts);
  }

  inspectSingle(runId: unknown, view: unknown, opts: PageOptions = {}): SinglePayload {
    return inspectSingle(this.ctx, runId, view, opts);
  }

  /** The end of one view (at most `maxBytes`), read without paging from the start. */
  inspectTail(runId: unknown, view: unknown, maxBytes: number): string {
    return inspectTail(this.ctx, runId, view, maxBytes);
  }

  /**
   * The `inspect` action as the contract routes it: the summary view (also for one run) is a batch;
   * any other view takes exactly one run and returns a page.
   */
  inspect(input: InspectInput): BatchPayload | SinglePayload {
    const view: RunViewName = assertView(input.view);
    const opts: PageOptions = {};
    if (input.limitBytes !== undefined) opts.limitBytes = input.limitBytes;
    if (input.cursor !== undefined) opts.cursor = input.cursor;
    if (view === "summary") return this.inspectBatch(input.runIds, opts);
    const targets = assertTargets(input.runIds, Number.MAX_SAFE_INTEGER);
    if (targets.length !== 1) throw new FlowError("request_invalid", `The ${view} view inspects exactly one run.`);
    return this.inspectSingle(targets[0], view, opts);
  }

  /**
   * The run's stable completion promise. A run that already ended resolves at once; one with no
   * live owner and unfinished evidence can never complete: `run_not_live`.
   */
  settled(runId: unknown): Promise<RunView> {
    const id = assertRunId(runId);
    const entry = this.registry.get(id);
    if (entry && entry.scope === this.ctx.scopeToken) return entry.completion;
    const view = buildView(resolveFacts(this.ctx, id));
    if (view.state.status === "done") return Promise.resolve(view);
    throw new FlowError("run_not_live", `Run ${id} has no live owner and its evidence is not terminal; it cannot complete.`);
  }

  /**
   * Whether another live process on this host owns this unfinished run: a reader outside that
   * process sees it as interrupted_or_uncertain, but it is still going (the `flow` command's tail).
   * A record is a cache that a power loss can leave older than the journal, and a process ID can
   * be another process's after a reboot: a journal that ended says the run is over, whatever the
   * record says.
   */
  ownedElsewhere(runId: unknown): boolean {
    const id = assertRunId(runId);
    const files = runFiles(this.scope, id);
    const record = readRecord(files.record, id);
    return record !== null && record.status !== "done" && ownerAlive(record.owner) && readTerminalLine(files.journal, id) === undefined;
  }

  /** Operator stop. `requested` does not mean the run has stopped. */
  cancel(runId: unknown, reason?: string): CancelPayload {
    const id = assertRunId(runId);
    const entry = this.registry.get(id);
    if (entry && entry.scope === this.ctx.scopeToken) {
      const status = this.registry.cancel(id, reason) ?? "terminal";
      return { runId: id, status };
    }
    const view = buildView(resolveFacts(this.ctx, id));
    if (view.state.status === "done") return { runId: id, status: "terminal" };
    throw new FlowError(
      "run_not_live",
      `Run ${id} has no live owner and its evidence is not terminal; a cancel cannot be confirmed.`,
    );
  }

  /**
   * Resolves once the run store's queued disk work (record rewrites, fsyncs) is done: for a process
   * about to exit, or a reader of the raw files.
   */
  idle(): Promise<void> {
    return groupCommit().idle();
  }

  /** Apply retention to this store's project (all its sessions). Live runs are never touched. */
  prune(policy: RetentionPolicy = DEFAULT_RETENTION, now?: number): Promise<PruneReport> {
    const opts: { registry: RunRegistry; projectKey: string; now?: number } = {
      registry: this.registry,
      projectKey: this.scope.projectKey,
    };
    if (now !== undefined) opts.now = now;
    return prune(this.scope.home, policy, opts);
  }
}

export function openRunStore(opts: RunStoreOptions): RunStore {
  ownIdentity(); // read once per process here, so creating a run reads nothing but its own files
  return new RunStore(opts);
}
