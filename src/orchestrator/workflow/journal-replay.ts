import { runFiles, type RunWriter } from "../../runs/index.ts";
import { JsonAnswer, type AgentOptions, type AgentResult, type HostCallContext, type HostError, type JsonValue, type WorkflowHost } from "../../../runtime/index.ts";
import { agentIdentity, describeCall, toolIdentity, type CallIdentity } from "./call-identity.ts";
import { callJournal } from "./call-journal.ts";
import { NESTED_TOOL, runsAction, safeToReplay, type ResumePlan, type ToolAnswer } from "./resume/plan.ts";
import { readKeptAnswer } from "./kept-answers.ts";
import { resolveResume, type ResumeSource } from "../child/index.ts";
import { hostError, type WorkflowChildren } from "./children.ts";
import type { ToolCallContext } from "./tools.ts";

type ToolFn = NonNullable<WorkflowHost["tools"]>[string];

/** The longest failure message a resume rebuilds (a journal is a file: it may claim any length). */
const MAX_REBUILT_CHARS = 64 * 1024 * 1024;

/**
 * tools.* as every workflow run journals them: the call (tool and argument hash) before it runs,
 * and its answer (the structured result, or the error) once it has one. A resumed run answers a
 * call from these lines; a call with a start and no answer may have acted already.
 */
export function journaledTools(tools: WorkflowHost["tools"], writer: RunWriter, runDir: string): WorkflowHost["tools"] {
  if (!tools) return undefined;
  const wrapped: NonNullable<WorkflowHost["tools"]> = {};
  for (const [name, fn] of Object.entries(tools)) {
    const call = journaledCall(name, fn, writer, runDir);
    wrapped[name] = (args, context) => call(args, context);
  }
  return wrapped;
}

/** One tool, journaled; `asked` is the arguments the script passed, when the tool runs with others. */
function journaledCall(name: string, fn: ToolFn, writer: RunWriter, runDir: string): (args: JsonValue, context: HostCallContext, asked?: JsonValue) => Promise<unknown> {
  const journal = callJournal(writer, false, runDir);
  return async (args, context, asked = args) => {
    const { index, signal } = context;
    journal.toolCall(index, name, toolIdentity(name, asked).argsHash, runsAction(name, asked));
    try {
      const value = await fn(args, context);
      // Serialised once: the journal keeps, and the sandbox is handed, the very same JSON. A value
      // that is not JSON fails here, once: read again, a toJSON that threw might answer.
      const answer = measured(value);
      journal.toolResult(index, name, { ok: true, value: answer }, signal.aborted);
      return answer;
    } catch (error) {
      const { code, message, fatal } = error as HostError;
      journal.toolResult(index, name, { ok: false, code: code ?? "tool_failed", message: message ?? String(error), ...(fatal === true ? { fatal } : {}) }, signal.aborted);
      throw error;
    }
  };
}

/** A tool's answer as JSON; one that is not JSON is the host_error the sandbox would make of it. */
function measured(value: unknown): JsonAnswer {
  if (value instanceof JsonAnswer) return value;
  try {
    return JsonAnswer.of(value);
  } catch (refused) {
    throw hostError("host_error", (refused as Error).message);
  }
}

export interface ReplayOptions {
  plan: ResumePlan;
  /** The live host: agent() through WorkflowChildren. */
  live: WorkflowHost;
  /** The tools.* bindings, not yet journaled: replay journals the calls it runs. */
  rawTools: WorkflowHost["tools"];
  children: WorkflowChildren;
  writer: RunWriter;
  /** Tools whose unanswered calls may run again (see replaySafeTools). */
  replaySafe: ReadonlySet<string>;
  /** The resumed run's folder, where its large tools.* answers are kept (kept-answers.ts). */
  runDir: string;
}

/**
 * The host of a resumed run. Call i of each kind is compared with journaled call i: a different
 * target or argument hash fails the run (fatal, so a script cannot catch it and go on mixing two
 * runs); a call that settled is answered from the journal without running; anything else runs live.
 */
export function replayingHost({ plan, live, rawTools, children, writer, replaySafe, runDir }: ReplayOptions): WorkflowHost {
  const diverged = (journaled: CallIdentity, asked: CallIdentity, index: number): HostError =>
    hostError(
      "failed",
      `The resumed run diverged from run ${plan.from.runId} at its ${describeCall(asked, index)}: the journal has ${describeCall(journaled, index)}. A resumed script must make the same calls as the run it continues.`,
      { fatal: true },
    );
  const same = (journaled: CallIdentity, asked: CallIdentity) => journaled.target === asked.target && journaled.argsHash === asked.argsHash;
  const replayedCalls = callJournal(writer, true, runDir);
  const fromDir = runFiles(plan.store.scope, plan.from.runId).dir;
  const ranLive = () => children.countLive();
  const replayed = () => children.countReplayed();

  /** The session an interrupted child kept, if any (pi: its session file; claude/codex: its CLI session). */
  const continuable = (childRunId: string | undefined): ResumeSource | undefined => {
    const found = childRunId === undefined ? undefined : plan.locate(childRunId);
    if (childRunId === undefined || found === undefined) return undefined;
    try {
      return resolveResume(childRunId, found.store);
    } catch {
      return undefined; // it kept nothing to continue (it never started), or it is not resumable: run afresh
    }
  };

  const agent = async (options: AgentOptions, context: HostCallContext): Promise<AgentResult> => {
    const { index } = context;
    const call = plan.agents.get(index);
    if (!call) {
      ranLive();
      return live.agent(options, context);
    }
    const asked = agentIdentity(options, index);
    const journaled: CallIdentity = { kind: "agent", target: call.target, description: call.description, argsHash: call.argsHash };
    if (!same(journaled, asked)) throw diverged(journaled, asked, index);
    if (call.rejected && !call.rejected.fatal) {
      // The call failed before a child started; the journal also holds the failure the script saw.
      const { code, message } = call.rejected;
      replayedCalls.agentRejected(index, asked, { code, message, fatal: false });
      children.countReplayedFailure();
      throw hostError(code, message);
    }
    const settled = call.childRunId !== undefined && call.outcome !== undefined && (call.outcome === "succeeded" || call.delivered === true);
    // The child may be in another session's store (a chain of resumes), or pruned: then it runs live.
    const child = settled ? plan.locate(call.childRunId!) : undefined;
    const view = child?.view;
    // The view carries a small value inline; a larger one is read from the final file.
    const final = view?.state.outcome !== "succeeded" ? undefined : view.output.delivery === "inline" ? { ok: true as const, value: view.output.value } : child!.store.finalValue(view.runId);
    // An unsettled child (running at the interruption, or stopped with the root) runs again,
    // continuing its persisted session where it kept one; a success whose final value can no
    // longer be read runs again from its prompt.
    if (!view) {
      ranLive();
      return children.agent(options, context, continuable(call.childRunId), asked);
    }
    if (call.outcome === "succeeded" && !final?.ok) {
      ranLive();
      return children.agent(options, context, undefined, asked);
    }
    children.recordReplayed({ index, identity: asked, view });
    if (call.outcome !== "succeeded") {
      const reason = view.state.error?.message ?? `the child ended ${call.outcome}`;
      throw hostError(call.outcome!, `agent() child ${view.runId} ${call.outcome}: ${reason}`, { runId: view.runId });
    }
    const value = ((final?.ok ? final.value : null) ?? null) as JsonValue;
    const result: AgentResult = { runId: view.runId, output: typeof value === "string" ? value : JSON.stringify(value), value, observedAt: view.timing.endedAt ?? view.timing.startedAt };
    if (view.usage) result.usage = view.usage as JsonValue;
    return result;
  };

  const tools: NonNullable<WorkflowHost["tools"]> = {};
  for (const [name, fn] of Object.entries(rawTools ?? {})) {
    const call = journaledCall(name, fn, writer, runDir);
    tools[name] = async (args, context) => replayTool(name, call, args, context);
  }

  async function replayTool(name: string, fn: ReturnType<typeof journaledCall>, args: JsonValue, context: HostCallContext): Promise<unknown> {
    const { index } = context;
    const call = plan.tools.get(index);
    if (!call) {
      ranLive();
      return fn(args, context);
    }
    const asked = toolIdentity(name, args);
    const journaled: CallIdentity = { kind: "tool", target: call.target, description: call.target, argsHash: call.argsHash };
    if (!same(journaled, asked)) throw diverged(journaled, asked, index);
    const answer = call.answer;
    if (!answer) {
      // A nested workflow that was running resumes with its parent, journaled as the call the script made.
      const nestedRun = name === NESTED_TOOL ? plan.nested.get(index) : undefined;
      if (nestedRun !== undefined) {
        ranLive();
        // Only this call may resume the nested run: its context says so to the tool it calls.
        const resuming: ToolCallContext = { ...context, resumesNested: nestedRun };
        return fn({ resume: nestedRun }, resuming, args);
      }
      if (!safeToReplay({ tool: name, ...(call.action !== undefined ? { action: call.action } : {}) }, replaySafe)) {
        throw hostError("failed", `tools.${name}${call.action ? ` ${call.action}` : ""} call ${index} of run ${plan.from.runId} started but never answered, and ${name} is not safe to replay: it may already have acted.`, { fatal: true });
      }
      ranLive();
      return fn(args, context);
    }
    const value = answer.ok ? measured(keptValue(answer, name, index)) : undefined;
    replayedCalls.toolCall(index, name, asked.argsHash, runsAction(name, args));
    // A message the journal cut is as long again as it was, so the sandbox cuts it to the same text the script saw.
    const message = answer.ok ? "" : answer.message.padEnd(Math.min(answer.messageChars ?? 0, MAX_REBUILT_CHARS), " ");
    const fatal = !answer.ok && answer.fatal === true;
    replayedCalls.toolResult(index, name, answer.ok ? { ok: true, value } : { ok: false, code: answer.code, message, ...(fatal ? { fatal } : {}) });
    replayed();
    if (answer.ok) return value;
    // A failure that ended the first run even when caught ends the resumed one the same way.
    throw hostError(answer.code, message, { fatal });
  }

  /** A journaled answer's value; one kept in a file is read now, and must be what the journal hashed. */
  function keptValue(answer: ToolAnswer & { ok: true }, name: string, index: number): unknown {
    if ("value" in answer) return answer.value;
    if ("deeperThan" in answer) return JsonAnswer.tooDeep();
    const read = readKeptAnswer(fromDir, answer.kept);
    if (read) return read.value;
    throw hostError("failed", `tools.${name} call ${index} of run ${plan.from.runId} answered, but its answer kept beside the journal (${answer.kept.file}) is gone or changed since, so the resumed run cannot be given it. Run the workflow again.`, { fatal: true });
  }

  const host: WorkflowHost = { agent };
  if (rawTools) host.tools = tools;
  // describeTool()/searchTools() read schemas only: a resumed run sees the same ones.
  if (live.toolSchemas) host.toolSchemas = live.toolSchemas;
  return host;
}
