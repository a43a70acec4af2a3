import { FlowError } from "../../../contract/errors.ts";
import type { RunOutcome, RunView } from "../../../contract/run-schema.ts";
import { RUN_ACTIONS } from "../../../contract/runs-schema.ts";
import { classifyJournalText, readEvidenceText, readLaunch, runFiles, type RunStore, errorCode } from "../../../runs/index.ts";
import { hashArgs } from "../call-identity.ts";
import { keptAnswerOf, keptAnswerPresent, type KeptAnswer } from "../kept-answers.ts";

/** What the journal recorded of one agent() call of the run being resumed. */
export interface JournaledAgentCall {
  target: string;
  description: string;
  argsHash: string;
  childRunId?: string;
  /** The child's outcome, once it settled. */
  outcome?: RunOutcome;
  /** The script saw this outcome (false: the child stopped because the root ended). */
  delivered?: boolean;
  /** The call failed before a child started. */
  rejected?: { code: string; message: string; fatal: boolean };
}

/** A journaled answer: its value, or (a large one) where it is kept beside the journal (kept-answers.ts). */
export type ToolAnswer = { ok: true; value: unknown } | { ok: true; kept: KeptAnswer } | { ok: true; deeperThan: number } | { ok: false; code: string; message: string; messageChars?: number; fatal?: boolean };

/** What the journal recorded of one tools.* call: its start, and its answer once it had one. */
export interface JournaledToolCall {
  target: string;
  argsHash: string;
  /** An external_runs call's action (journals before this field have none). */
  action?: string;
  answer?: ToolAnswer;
}

/**
 * The action of an external_runs call, as a journal records it: one of the tool's own, or none. A
 * script chooses the text, so nothing else it passes there is kept (the tool refuses it anyway).
 */
export function runsAction(tool: string, args: unknown): string | undefined {
  if (tool !== "external_runs" || args === null || typeof args !== "object" || Array.isArray(args)) return undefined;
  const action = (args as { action?: unknown }).action;
  return (RUN_ACTIONS as readonly unknown[]).includes(action) ? (action as string) : undefined;
}

/**
 * Whether an unanswered call may run again on resume: its tool is safe to replay, and it is not an
 * external_runs steer, which a second time is a second message to the child. (Every other
 * external_runs action reads, or changes nothing more when repeated.)
 */
export function safeToReplay(call: { tool: string; action?: string }, replaySafe: ReadonlySet<string>): boolean {
  return replaySafe.has(call.tool) && !(call.tool === "external_runs" && call.action === "steer");
}

/** Everything a resumed run needs from the run it continues: its inputs and its calls by index. */
export interface ResumePlan {
  /** The run being resumed, as it is now. */
  from: RunView;
  /** The store (session) that holds it. */
  store: RunStore;
  /**
   * The store holding one of its children, which may be another session's (a run resumed in a new
   * session replays children of the session it started in); undefined when the child is gone
   * (pruned): the call then runs live.
   */
  locate(runId: string): LocatedRun | undefined;
  seed: string;
  startedAt: number;
  workflow: string;
  script: string;
  scriptHash: string;
  args: Record<string, unknown>;
  agents: Map<number, JournaledAgentCall>;
  tools: Map<number, JournaledToolCall>;
  /** The workflow run a tools.external_workflow call started, by its tools.* index. */
  nested: Map<number, string>;
}

/** What a resumed run replays from: the plan, and the tools whose unanswered calls may run again. */
export interface ResumeReplay {
  plan: ResumePlan;
  replaySafe: ReadonlySet<string>;
}


type Line = { t?: string; name?: string; data?: Record<string, unknown>; childRunId?: string; outcome?: RunOutcome };

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object" && !Array.isArray(value);
const str = (value: unknown): string => (typeof value === "string" ? value : "");

function readJournal(store: RunStore, runId: string): string {
  try {
    return readEvidenceText(runFiles(store.scope, runId).journal);
  } catch (error) {
    throw new FlowError("run_unavailable", `Run ${runId}'s journal cannot be read (${errorCode(error) ?? (error as Error).message}).`);
  }
}

/** A run found in one of the project's stores, with its view as read there. */
export interface LocatedRun {
  store: RunStore;
  view: RunView;
}

/** Run `runId` as `store` serves it, or undefined when it does not (a pruned or unknown run is not an error here). */
export function locateIn(store: RunStore, runId: string): LocatedRun | undefined {
  try {
    return { store, view: store.view(runId) };
  } catch (error) {
    if (error instanceof FlowError && error.code === "run_unavailable") return undefined;
    throw error;
  }
}

/** Folds the journal's call records into one entry per index, line by line as the integrity check hands them over. */
class CallFolder {
  /** The run's folder, where its large tools.* answers are kept. */
  private readonly runDir: string;
  readonly nested = new Map<number, string>();
  readonly agents = new Map<number, JournaledAgentCall>();
  readonly tools = new Map<number, JournaledToolCall>();
  /** The `replay` event's data: seed, start time, script and args hashes. */
  replay: Record<string, unknown> | undefined;
  private readonly agentByChild = new Map<string, JournaledAgentCall>();

  constructor(runDir: string) {
    this.runDir = runDir;
  }

  add(line: Line): void {
    if (line.t === "child") {
      const call = line.childRunId ? this.agentByChild.get(line.childRunId) : undefined;
      if (call && line.outcome) {
        call.outcome = line.outcome;
        call.delivered = isObject(line.data) && line.data.delivered === true;
      }
      return;
    }
    if (line.t !== "event" || !isObject(line.data)) return;
    const data = line.data;
    if (line.name === "replay") {
      this.replay ??= data;
      return;
    }
    const index = typeof data.index === "number" ? data.index : -1;
    if (index < 0) return;
    switch (line.name) {
      case "agent_start": {
        const call: JournaledAgentCall = { target: str(data.target), description: str(data.description), argsHash: str(data.argsHash), childRunId: str(data.childRunId) };
        this.agents.set(index, call);
        this.agentByChild.set(call.childRunId!, call);
        return;
      }
      case "agent_rejected":
        this.agents.set(index, {
          target: str(data.target),
          description: str(data.description),
          argsHash: str(data.argsHash),
          rejected: { code: str(data.code), message: str(data.message), fatal: data.fatal === true },
        });
        return;
      case "nested_run":
        this.nested.set(index, str(data.runId));
        return;
      case "tool_call":
        this.tools.set(index, { target: str(data.tool), argsHash: str(data.argsHash), ...(typeof data.action === "string" ? { action: data.action } : {}) });
        return;
      case "tool_result": {
        const call = this.tools.get(index);
        if (!call || data.stopped === true) return;
        if (data.ok !== true) {
          const messageChars = typeof data.messageChars === "number" && Number.isSafeInteger(data.messageChars) ? data.messageChars : undefined;
          call.answer = { ok: false, code: str(data.code) || "tool_failed", message: str(data.message), ...(messageChars !== undefined ? { messageChars } : {}), ...(data.fatal === true ? { fatal: true } : {}) };
          return;
        }
        // An answer nested past every valueDepth is journaled as only that (kept-answers.ts).
        if (typeof data.deeperThan === "number") {
          call.answer = { ok: true, deeperThan: data.deeperThan };
          return;
        }
        const kept = keptAnswerOf(data);
        // A kept answer whose file is gone (or was never written) is no answer: the call counts as unanswered.
        if (kept === undefined) call.answer = { ok: true, value: data.value ?? null };
        else if (keptAnswerPresent(this.runDir, kept)) call.answer = { ok: true, kept };
      }
    }
  }
}

/**
 * Checks that `runId` (found in `store`) can be resumed, with no side effect, and reads what the
 * resumed run replays. A run that succeeded is returned as it is: nothing needs to run.
 */
export function planResume(store: RunStore, runId: string, nested = false): { succeeded: RunView } | { plan: ResumePlan } {
  const from = store.view(runId);
  if (from.kind !== "workflow") throw new FlowError("request_invalid", `resume continues a workflow run; ${runId} is an agent run (external_delegate resume continues those).`);
  if (from.live || store.ownedElsewhere(runId)) {
    throw new FlowError("request_invalid", `Run ${runId} is still live: wait for it or cancel it with external_runs before resuming it.`);
  }
  if (from.state.outcome === "succeeded") return { succeeded: from };
  if (from.state.outcome === "failed") {
    throw new FlowError("request_invalid", `Run ${runId} failed; resuming it would replay the same failure. Fix the cause and run the workflow again.`);
  }
  if (from.task.parentRunId && !nested) {
    throw new FlowError("request_invalid", `Run ${runId} was started by workflow ${from.task.parentRunId}; resume that one: nested workflows resume with their parent.`);
  }

  // One pass: the integrity check hands over each whole line (a torn last line is left out).
  const calls = new CallFolder(runFiles(store.scope, runId).dir);
  const report = classifyJournalText(readJournal(store, runId), runId, (line) => calls.add(line as Line));
  if (report.integrity === "damaged" || report.integrity === "unknown") {
    throw new FlowError("run_unavailable", `Run ${runId}'s journal is ${report.integrity} (${report.reason ?? "unreadable"}); it cannot be replayed.`);
  }
  const launch = report.start ? readLaunch(runFiles(store.scope, runId), runId, report.start) : undefined;
  if (!launch) throw new FlowError("run_unavailable", `Run ${runId}'s launch details cannot be read; it cannot be replayed.`);
  const replay = calls.replay;
  if (!isObject(replay) || typeof replay.seed !== "string" || typeof replay.startedAt !== "number" || typeof replay.scriptHash !== "string") {
    throw new FlowError("request_invalid", `Run ${runId} was recorded by a pi-flow that did not journal its calls for replay; run the workflow again.`);
  }
  const script = str(launch.script);
  const args = isObject(launch.args) ? launch.args : {};
  // Launch evidence is redacted when written: a script or args that held a secret no longer hash alike.
  const workflow = str(launch.workflow) || "inline";
  if (workflow === "inline" && hashArgs(script) !== replay.scriptHash) {
    throw new FlowError("script_invalid", `Run ${runId}'s script was redacted when it was saved (it held a secret-shaped string), so it cannot be replayed.`);
  }
  if (hashArgs(args) !== replay.argsHash) {
    throw new FlowError("request_invalid", `Run ${runId}'s args were redacted when they were saved (they held a secret-shaped string), so the run cannot be replayed.`);
  }
  return {
    plan: {
      from,
      store,
      locate: (id) => locateIn(store, id),
      seed: replay.seed,
      startedAt: replay.startedAt,
      workflow,
      script,
      scriptHash: replay.scriptHash,
      args,
      agents: calls.agents,
      tools: calls.tools,
      nested: calls.nested,
    },
  };
}

/**
 * The tools.* calls that started but never answered: they may have acted already. A nested
 * workflow whose run is known is not among them: the resume resumes that run instead.
 */
export function unansweredTools(plan: ResumePlan): { index: number; tool: string; action?: string }[] {
  return [...plan.tools]
    .filter(([index, call]) => call.answer === undefined && !(call.target === NESTED_TOOL && plan.nested.has(index)))
    .map(([index, call]) => ({ index, tool: call.target, ...(call.action !== undefined ? { action: call.action } : {}) }));
}

/** The tool through which a workflow starts a nested one. */
export const NESTED_TOOL = "external_workflow";
