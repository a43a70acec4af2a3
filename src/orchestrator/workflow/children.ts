import { FlowError } from "../../contract/errors.ts";
import type { RunView } from "../../contract/run-schema.ts";
import { WAITING_FOR_WORKER, type ChildEntry } from "../../contract/child-entry.ts";
import { stripControls, type RunWriter } from "../../runs/index.ts";
import { addUsage, type UsageTotals } from "../../harnesses/index.ts";
import type { AgentOptions, AgentResult, HostCallContext, HostError, JsonValue } from "../../../runtime/index.ts";
import { agentIdentity, nameAgentRefusal, type CallIdentity } from "./call-identity.ts";
import { callJournal, type CallJournal } from "./call-journal.ts";
import { checkAgentOptions } from "./agent-options.ts";
import { REPOSITORY_WARNINGS, type RepositoryWarning } from "../../contract/warnings.ts";
import { availableRoles, launchChild, prepareChild, type ChildCall, type LaunchEnvironment, type SettledChild } from "../child/index.ts";
import type { ResumeSource } from "../child/index.ts";
import { childWorkflowId } from "../../backends/index.ts";
import { firstOfChain } from "./resume/chain.ts";

/**
 * Failures found before launch that no retry can fix: they fail the workflow root, even if the
 * script catches them, and are not counted as failed agent() calls.
 */
const FATAL_CODES = new Set(["selection_invalid", "configuration_invalid", "harness_unavailable", "model_unavailable"]);

/** The last non-blank line of a chunk of (redacted) child output, bounded and without escapes for progress reports. */
function lastLine(text: string): string | undefined {
  const line = stripControls(text).split("\n").map((part) => part.trim()).filter((part) => part !== "").at(-1);
  return line === undefined ? undefined : line.slice(0, 200);
}

export interface ChildCounts {
  count: number;
  failed: number;
  /** A resumed run only: agent() and tools.* calls answered from the journal, and calls that ran. */
  replayed?: number;
  live?: number;
}

/** An agent() call a resumed run answered from the journal: the child that settled before. */
export interface ReplayedChild {
  index: number;
  identity: CallIdentity;
  view: RunView;
}

/** A failure the script sees from a host call; `fatal` fails the root even if the script catches it. */
export function hostError(code: string, message: string, extra: { runId?: string; fatal?: boolean } = {}): HostError {
  const error: HostError = Object.assign(new Error(message), { code });
  if (extra.runId !== undefined) error.runId = extra.runId;
  if (extra.fatal) error.fatal = true;
  return error;
}

/**
 * agent() options → the same call external_delegate takes, checked against its schema
 * (agent-options.ts). Its description is the call's label in its identity (call-identity.ts): the
 * given one, else one line of the prompt's first 60 characters with its white space folded.
 */
export function toChildCall(options: AgentOptions, identity: Pick<CallIdentity, "description">, roles?: () => readonly string[]): ChildCall {
  checkAgentOptions(options, roles);
  return { ...options, description: identity.description };
}

export interface WorkflowChildrenOptions {
  env: LaunchEnvironment;
  writer: RunWriter;
  onChange(): void;
  /** A resumed run: its replayed and live calls are counted and shown with the children. */
  resumed?: boolean;
}

/**
 * The workflow's side of agent(): every child goes through the same core as external_delegate
 * (prepareChild + launchChild) with the snapshot frozen when the workflow call started, is indexed
 * in the workflow's journal, and stops when the workflow root ends.
 */
export class WorkflowChildren {
  readonly entries: ChildEntry[] = [];
  private readonly options: WorkflowChildrenOptions;
  private readonly inflight = new Set<Promise<unknown>>();
  private failedCalls = 0;
  /** Tools some child of this run asked for and ran without: the root's receipt warns too. */
  readonly withheldTools = new Set<string>();
  /** Children the stub harness answered: the root's receipt warns `stubbed`. */
  stubbed = 0;
  /** What worktree children's settles warned of the repository every worktree shares (git_controls_changed, …): the root warns too. */
  readonly repositoryWarnings = new Set<RepositoryWarning>();
  /** A resumed run's agent() and tools.* calls answered from the journal, and those that ran. */
  private replayedCalls = 0;
  private liveCalls = 0;
  /** Model usage of every child so far: the workflow's own usage is its children's. */
  private readonly usage: UsageTotals = {};

  /** The journal lines of calls that run, and of calls a resumed run answers from the journal. */
  private readonly calls: CallJournal;
  private readonly replayedCallLines: CallJournal;

  /**
   * Whose agent() calls these are, for the dbos backend's child IDs: a resumed run's are the first
   * run of its resume chain, so a resume of a resume finds the children any run of it enqueued.
   */
  private readonly fleetRoot: string;

  constructor(options: WorkflowChildrenOptions) {
    this.options = options;
    const view = options.writer.view();
    this.fleetRoot = options.env.fleet ? firstOfChain(view, options.env.runs) : view.runId;
    this.calls = callJournal(options.writer);
    this.replayedCallLines = callJournal(options.writer, true);
  }

  get counts(): ChildCounts {
    const counts: ChildCounts = { count: this.entries.length, failed: this.failedCalls };
    return this.options.resumed ? { ...counts, replayed: this.replayedCalls, live: this.liveCalls } : counts;
  }

  /** A resumed run's call (agent() or tools.*) that runs live. */
  countLive(): void {
    this.liveCalls++;
    this.publishCounts();
  }

  /** A resumed run's tools.* call answered from the journal. */
  countReplayed(): void {
    this.replayedCalls++;
    this.publishCounts();
  }

  /**
   * Indexes a child the journal already answered, as if it had just run: the same journal lines
   * (marked replayed, so this run can itself be resumed) and the same failure count. Nothing runs.
   */
  recordReplayed({ index, identity, view }: ReplayedChild): void {
    const outcome = view.state.outcome ?? "failed";
    const entry: ChildEntry = { index, runId: view.runId, description: view.task.description, status: outcome };
    if (view.state.error) entry.error = view.state.error.message;
    if (view.usage) entry.usage = view.usage;
    this.entries.push(entry);
    this.replayedCallLines.agentStart(index, view.runId, identity);
    this.replayedCallLines.childSettled(index, view.runId, outcome, true);
    if (outcome !== "succeeded") this.failedCalls++;
    this.replayedCalls++;
    this.publishCounts();
  }

  /** Resolves once every child started so far has settled (they stop when the root ends). */
  async drain(): Promise<void> {
    while (this.inflight.size > 0) await Promise.all([...this.inflight]);
  }

  /**
   * `continueFrom`: a resumed run's child that was running at the interruption continues its
   * session. `identity`: the call's identity when the caller has it already (a resume checked it).
   */
  agent(options: AgentOptions, context: HostCallContext, continueFrom?: ResumeSource, identity = agentIdentity(options, context.index)): Promise<AgentResult> {
    const call = this.start(options, context, identity, continueFrom);
    const tracked = call.catch(() => undefined);
    this.inflight.add(tracked);
    void tracked.finally(() => this.inflight.delete(tracked));
    return call;
  }

  private async start(options: AgentOptions, { signal, index }: HostCallContext, identity: CallIdentity, continueFrom?: ResumeSource): Promise<AgentResult> {
    const { env, writer } = this.options;
    let launched: ReturnType<typeof launchChild>;
    // Progress may only arrive after launchChild returns, when the entry below exists.
    let live: ChildEntry | undefined;
    const changed = () => {
      if (live?.status === "running") this.options.onChange();
    };
    try {
      const call = toChildCall(options, identity, () => availableRoles(env));
      // An outputSchema built at run time is checked in prepareChild, once (flow check finds a literal one).
      const prepared = await prepareChild(call, env, signal);
      for (const tool of prepared.tools.withheld) this.withheldTools.add(tool);
      if (prepared.harness === "stub") this.stubbed++;
      // Only on the harness it ran on: a call that now selects another harness starts afresh.
      if (continueFrom && continueFrom.harness === prepared.harness && !prepared.resume) prepared.resume = continueFrom;
      launched = launchChild(prepared, env, {
        background: false,
        signal,
        parentRunId: writer.runId,
        fleetWorkflowId: childWorkflowId(this.fleetRoot, index),
        onProgress: ({ activity, usage }) => {
          if (!live) return;
          live.activity = activity;
          live.usage = usage;
          changed();
        },
        onOutput: (text) => {
          const line = lastLine(text);
          if (!live || line === undefined) return;
          live.lastOutput = line;
          changed();
        },
      });
    } catch (caught) {
      // Anything else that stops a launch is a failed agent() call the script sees, like a FlowError.
      const error = caught instanceof FlowError ? caught : new FlowError("failed", `agent() could not start a child: ${caught instanceof Error ? caught.message : String(caught)}`);
      const fatal = FATAL_CODES.has(error.code);
      // A script may make many calls: the refusal says which one (the run's error adds the line).
      const message = nameAgentRefusal(error.message, index, identity.description);
      this.calls.agentRejected(index, identity, { code: error.code, message, fatal });
      if (!fatal) this.countFailure(signal);
      throw hostError(error.code, message, { fatal });
    }
    const entry: ChildEntry = { index, runId: launched.runId, description: launched.accepted.task.description, status: "running", startedAt: Date.now() };
    // On the dbos backend the child is queued from its first report until a worker takes it.
    if (launched.accepted.state.status === "queued") entry.activity = WAITING_FOR_WORKER;
    live = entry;
    this.entries.push(entry);
    this.calls.agentStart(index, entry.runId, { ...identity, description: entry.description });
    this.publishCounts();
    const settled: SettledChild = await launched.settled;
    for (const warning of REPOSITORY_WARNINGS) if (settled.warnings.includes(warning)) this.repositoryWarnings.add(warning);
    const view: RunView = settled.view;
    const outcome = view.state.outcome ?? "failed";
    entry.status = outcome;
    entry.endedAt = Date.now();
    delete entry.activity;
    if (view.state.error) entry.error = view.state.error.message;
    if (view.usage) entry.usage = view.usage;
    // delivered: the script saw this outcome; a child stopped because the root ended was not.
    this.calls.childSettled(index, entry.runId, outcome, !signal.aborted);
    this.addUsage(view.usage);
    if (outcome !== "succeeded") {
      this.countFailure(signal);
      const reason = view.state.error?.message ?? `the child ended ${outcome}`;
      throw hostError(outcome, `agent() child ${entry.runId} ${outcome}: ${reason}`, { runId: entry.runId });
    }
    this.options.onChange();
    const value = (settled.value ?? null) as JsonValue;
    const result: AgentResult = {
      runId: entry.runId,
      output: typeof value === "string" ? value : JSON.stringify(value),
      value,
      // When the evidence was captured: what handoff() stamps on a packet.
      observedAt: view.timing.endedAt ?? new Date().toISOString(),
    };
    if (view.usage) result.usage = view.usage as JsonValue;
    return result;
  }

  /** A resumed run replayed an agent() call that had failed before a child started. */
  countReplayedFailure(): void {
    this.failedCalls++;
    this.replayedCalls++;
    this.publishCounts();
  }

  /** Only failures the script can still see count; a child stopped because the root ended is not delivered. */
  private countFailure(signal: AbortSignal): void {
    if (!signal.aborted) this.failedCalls++;
    this.publishCounts();
  }

  private addUsage(usage: RunView["usage"]): void {
    if (!usage || this.options.writer.settled) return;
    addUsage(this.usage, usage);
    this.options.writer.setUsage(this.usage);
  }

  private publishCounts(): void {
    if (!this.options.writer.settled) this.options.writer.setChildren(this.counts);
    this.options.onChange();
  }
}
