import type { RunOutcome } from "../../contract/run-schema.ts";
import type { RunWriter } from "../../runs/index.ts";
import type { CallIdentity } from "./call-identity.ts";
import { keepAnswer } from "./kept-answers.ts";
import { JsonAnswer, MAX_ERROR_MESSAGE_CHARS, MAX_NAME_CHARS } from "../../../runtime/index.ts";

/**
 * The journal lines of a workflow's agent() and tools.* calls, written the same way whether the
 * call ran or a resumed run answered it from an earlier run's journal (`replayed`, so the resumed
 * run can itself be resumed). resume-plan.ts folds these lines back into calls. A line for a run
 * that has settled is dropped: its journal is closed.
 */
export interface CallJournal {
  agentStart(index: number, childRunId: string, identity: CallIdentity): void;
  childSettled(index: number, childRunId: string, outcome: RunOutcome, delivered: boolean): void;
  agentRejected(index: number, identity: CallIdentity, error: { code: string; message: string; fatal: boolean }): void;
  /** `action`: an external_runs call's, kept so a resume can tell a steer (not safe to send twice) from a read. */
  toolCall(index: number, tool: string, argsHash: string, action?: string): void;
  toolResult(index: number, tool: string, answer: ToolAnswer, stopped?: boolean): void;
}

/** `fatal`: the failure ended the run even if the script caught it; a resume must replay it so. */
export type ToolAnswer = { ok: true; value: unknown } | { ok: false; code: string; message: string; fatal?: boolean };

/**
 * `runDir`, the run's folder, is where a tools.* answer too large for its journal line is kept
 * (kept-answers.ts); journals of agent() calls only need none.
 */
/**
 * A tool's failure as the journal keeps it: what the script saw of it. The sandbox shows a script
 * the first MAX_ERROR_MESSAGE_CHARS of the message, with how many more were cut, and the first
 * MAX_NAME_CHARS of the code; a tool that throws megabytes of text 256 times no longer writes them
 * all into the journal. `messageChars` is the message's whole length: a resume rebuilds a message
 * of that length, so the script sees the very same cut text (see journal-replay.ts).
 */
function boundedFailure(answer: { ok: false; code: string; message: string; fatal?: boolean }): Record<string, unknown> {
  const code = answer.code.slice(0, MAX_NAME_CHARS);
  const fatal = answer.fatal === true ? { fatal: true } : {};
  if (answer.message.length <= MAX_ERROR_MESSAGE_CHARS) return { ok: false, code, message: answer.message, ...fatal };
  return { ok: false, code, message: answer.message.slice(0, MAX_ERROR_MESSAGE_CHARS), messageChars: answer.message.length, ...fatal };
}

/**
 * A tool's answer as its journal line holds it; one that is not JSON (a BigInt, a cycle, a toJSON
 * that throws) as the failure the sandbox makes of it, so the script is told the same on a resume.
 * An answer journaledCall measured arrives as its JsonAnswer, serialised already.
 */
function keptOrRefused(runDir: string, index: number, value: unknown): Record<string, unknown> {
  let answer: JsonAnswer;
  try {
    answer = value instanceof JsonAnswer ? value : JsonAnswer.of(value);
  } catch (refused) {
    return boundedFailure({ ok: false, code: "host_error", message: (refused as Error).message });
  }
  try {
    return { ok: true, ...keepAnswer(runDir, index, answer) };
  } catch {
    return boundedFailure({ ok: false, code: "host_error", message: "the host's answer could not be journaled" });
  }
}

export function callJournal(writer: RunWriter, replayed = false, runDir?: string): CallJournal {
  const mark = replayed ? { replayed: true } : {};
  const event = (name: string, data: Record<string, unknown>) => {
    if (!writer.settled) writer.journal({ t: "event", name, data: { ...data, ...mark } });
  };
  return {
    agentStart: (index, childRunId, { description, target, argsHash }) => event("agent_start", { index, childRunId, description, target, argsHash }),
    childSettled: (index, childRunId, outcome, delivered) => {
      if (!writer.settled) writer.journal({ t: "child", childRunId, outcome, data: { index, delivered, ...mark } });
    },
    agentRejected: (index, { target, description, argsHash }, { code, message, fatal }) =>
      event("agent_rejected", { index, code, message, fatal, target, description, argsHash }),
    toolCall: (index, tool, argsHash, action) => event("tool_call", { index, tool, argsHash, ...(action !== undefined ? { action } : {}) }),
    // An answer that arrives once the root has stopped never reached the script: `stopped` says so,
    // and a resume treats the call as unanswered (it may have acted before it stopped).
    toolResult: (index, tool, answer, stopped = false) => {
      if (writer.settled) return;
      const kept = !answer.ok ? boundedFailure(answer) : runDir !== undefined ? keptOrRefused(runDir, index, answer.value) : { ok: true, value: answer.value instanceof JsonAnswer ? answer.value.value : answer.value };
      event("tool_result", { index, tool, ...kept, ...(stopped ? { stopped: true } : {}) });
    },
  };
}
