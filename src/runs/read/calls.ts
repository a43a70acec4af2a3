import { lstatSync } from "node:fs";
import { dirname } from "node:path";
import { readEvidenceText } from "../fsio.ts";
import { FlowError } from "../../contract/errors.ts";
import type { RunOutcome } from "../../contract/run-schema.ts";
import { classifyJournalText } from "../journal/integrity.ts";
import type { JournalLine } from "../journal/journal.ts";
import { readEarlierLaunch } from "../journal/journal-ends.ts";
import { memoryDocument, type ViewDocument } from "./paging.ts";
import { DEFAULT_LIMITS, LIMIT_CEILINGS, LIMIT_LABELS } from "../../../runtime/index.ts";

/**
 * The `calls` view of a workflow run: every agent() and tools.* call its journal recorded, in the
 * order they started, one entry each. It is folded from the journal, whose lines were redacted
 * when written, so it says nothing the journal does not; a tool's answer stays in the journal
 * (and a started run's answer in that run's views): an entry says what was called and how it went.
 */
export interface WorkflowCall {
  kind: "agent" | "tool";
  /** The call's index among the run's calls of its kind (agent() and tools.* count apart). */
  index: number;
  /** agent(): the role or agent definition it asked for; tools.*: the tool. */
  target: string;
  /** A Flow tool's action, as its receipt names it (`list`, `inspect`, `delegate`, …). */
  action?: string;
  /** agent(): the call's description. */
  description?: string;
  /** The run the call started: an agent() child, or the run of a tools.external_delegate or external_workflow call. */
  runId?: string;
  /** `pending` until the journal records an outcome (still running, or the workflow stopped first). */
  status: "pending" | RunOutcome;
  error?: { code: string; message: string };
  /** The answer never reached the script: the workflow had stopped. */
  delivered?: false;
  /** A resumed run answered the call from the run it resumes. */
  replayed?: true;
}

type Data = Record<string, unknown>;

const isObject = (value: unknown): value is Data => value !== null && typeof value === "object" && !Array.isArray(value);
const text = (value: unknown): string => (typeof value === "string" ? value : "");
const OUTCOMES: ReadonlySet<string> = new Set(["succeeded", "failed", "cancelled", "timed_out"]);

/** A Flow tool's receipt (its envelope): the action, whether it succeeded, and the run it started. */
function receiptFacts(tool: string, value: unknown): Pick<WorkflowCall, "action" | "runId" | "error"> & { failed?: boolean } {
  if (!isObject(value) || value.contractVersion === undefined) return {};
  const facts: Pick<WorkflowCall, "action" | "runId" | "error"> & { failed?: boolean } = {};
  if (typeof value.action === "string") facts.action = value.action;
  const run = isObject(value.data) && isObject(value.data.run) ? value.data.run : undefined;
  if ((tool === "external_delegate" || tool === "external_workflow") && typeof run?.runId === "string") facts.runId = run.runId;
  if (value.ok === false) {
    facts.failed = true;
    const error = isObject(value.error) ? value.error : {};
    facts.error = { code: text(error.code) || "failed", message: text(error.message) };
  }
  return facts;
}

/** Folds journal lines into calls, line by line as the integrity check hands them over. */
class CallList {
  readonly calls: WorkflowCall[] = [];
  private readonly agents = new Map<number, WorkflowCall>();
  private readonly agentByRun = new Map<string, WorkflowCall>();
  private readonly tools = new Map<number, WorkflowCall>();
  private readonly nested = new Map<number, string>();
  /** The run's replyChars, from its start line's launch: an answer past it was refused to the script. */
  private replyChars: number = DEFAULT_LIMITS.replyChars;
  /** tools.* calls judged refused by their answer's journaled size alone, until their tool_end line says. */
  private readonly oversized = new Set<number>();

  /** The launch details a run recorded by an earlier pi-flow kept beside its journal. */
  private readonly earlierLaunch: () => unknown;

  constructor(earlierLaunch: () => unknown) {
    this.earlierLaunch = earlierLaunch;
  }

  private start(call: WorkflowCall, data: Data): WorkflowCall {
    if (data.replayed === true) call.replayed = true;
    this.calls.push(call);
    (call.kind === "agent" ? this.agents : this.tools).set(call.index, call);
    return call;
  }

  add(line: JournalLine): void {
    const { t, data } = line as { t: string; data?: unknown };
    if (t === "start") {
      // A run recorded before the launch details moved into the start line kept them in launch.json.
      this.replyChars = startReplyChars((line as { launch?: unknown }).launch ?? this.earlierLaunch());
      return;
    }
    if (t === "child") {
      const { childRunId, outcome } = line as { childRunId?: string; outcome?: string };
      const call = childRunId === undefined ? undefined : this.agentByRun.get(childRunId);
      if (call && outcome && OUTCOMES.has(outcome)) {
        call.status = outcome as RunOutcome;
        if (isObject(data) && data.delivered === false) call.delivered = false;
      }
      return;
    }
    if (t !== "event" || !isObject(data) || typeof data.index !== "number") return;
    const index = data.index;
    const name = (line as { name?: string }).name;
    if (name === "agent_start") {
      const call = this.start({ kind: "agent", index, target: text(data.target), description: text(data.description), runId: text(data.childRunId), status: "pending" }, data);
      this.agentByRun.set(call.runId!, call);
    } else if (name === "agent_rejected") {
      const error = { code: text(data.code) || "failed", message: text(data.message) };
      this.start({ kind: "agent", index, target: text(data.target), description: text(data.description), status: "failed", error }, data);
    } else if (name === "tool_call") {
      const call = this.start({ kind: "tool", index, target: text(data.tool), status: "pending" }, data);
      const nested = this.nested.get(index);
      if (nested) call.runId = nested;
    } else if (name === "nested_run") {
      this.nested.set(index, text(data.runId));
      const call = this.tools.get(index);
      if (call) call.runId = text(data.runId);
    } else if (name === "tool_result") {
      this.answer(index, data);
    } else if (name === "tool_end") {
      this.ended(index, data);
    }
  }

  /**
   * The sandbox's own word on how the call ended: an answer it refused (replyChars) was ok for the
   * tool, a failure for the script; and an answer it handed over succeeded, even if its redacted
   * copy measures over replyChars (a `password=…` redacted is longer than it was).
   */
  private ended(index: number, data: Data): void {
    const call = this.tools.get(index);
    if (!call) return;
    if (data.ok === true && this.oversized.delete(index)) {
      call.status = "succeeded";
      delete call.error;
      return;
    }
    if (call.status !== "succeeded" || data.ok !== false) return;
    const code = text(data.code) || "tool_failed";
    call.status = "failed";
    call.error = { code, message: code === "replyChars" ? `${LIMIT_LABELS.replyChars} (${this.replyChars}) reached` : refusedBecause(code) };
  }

  private answer(index: number, data: Data): void {
    const call = this.tools.get(index);
    if (!call) return;
    if (data.stopped === true) call.delivered = false;
    if (data.ok !== true) {
      call.status = "failed";
      call.error = { code: text(data.code) || "tool_failed", message: text(data.message) };
      return;
    }
    // A large answer is kept beside the journal, its receipt's facts on the line (kept-answers.ts).
    const { failed, ...facts } = receiptFacts(call.target, data.value ?? data.receipt);
    Object.assign(call, facts.runId && call.runId ? { ...facts, runId: call.runId } : facts);
    call.status = failed ? "failed" : "succeeded";
    // The tool answered, but the script was refused an answer past the run's replyChars (the bridge's words).
    const chars = answerChars(data);
    if (chars > this.replyChars) {
      this.oversized.add(index);
      call.status = "failed";
      call.error = { code: "replyChars", message: `${LIMIT_LABELS.replyChars} (${this.replyChars}) reached: the answer has ${chars} characters of JSON` };
    }
  }
}

/** Why the sandbox refused an answer the tool gave: a limit it met (valueDepth), else its code alone. */
function refusedBecause(code: string): string {
  return Object.hasOwn(LIMIT_LABELS, code) ? `${LIMIT_LABELS[code as keyof typeof LIMIT_LABELS]} reached: the script was refused the answer` : `the script was refused the answer (${code})`;
}

/**
 * The replyChars a run's launch asked for (its workflow's meta.limits: the only way a pi-flow run is
 * given limits), else the default; a start line is a file, so checked.
 */
function startReplyChars(launch: unknown): number {
  const meta = isObject(launch) && isObject(launch.meta) ? launch.meta : undefined;
  const asked = meta && isObject(meta.limits) ? meta.limits.replyChars : undefined;
  return typeof asked === "number" && Number.isSafeInteger(asked) && asked > 0 && asked <= LIMIT_CEILINGS.replyChars ? asked : DEFAULT_LIMITS.replyChars;
}

/**
 * The answer's JSON length as the journal line records it: a cut answer's measured size, a kept
 * answer's recorded size, or the inline value's (at most a few KiB) JSON. Redaction may have moved
 * a kept or inline answer's length by a few characters from what the sandbox measured.
 */
function answerChars(data: Data): number {
  const kept = isObject(data.kept) ? data.kept : undefined;
  if (kept) {
    const size = typeof kept.cut === "number" ? kept.cut : kept.chars;
    return typeof size === "number" && Number.isFinite(size) ? size : 0;
  }
  return (JSON.stringify(data.value ?? null) ?? "null").length;
}

/**
 * The largest journal the view folds: it is read whole into memory, where the journal view pages
 * from disk. A workflow of thousands of calls writes a few MiB; past this, page the journal view.
 */
export const CALLS_JOURNAL_MAX_BYTES = 64 * 1024 * 1024;

/** A workflow's calls as its journal at `path` has them; an unreadable journal has none to show. */
export function workflowCalls(path: string, runId: string): WorkflowCall[] {
  const doc = callsDocument(path, runId);
  return JSON.parse(doc.read(0, doc.size).toString("utf8")) as WorkflowCall[];
}

/**
 * The folded calls of the journals read last, by the journal's size and change time: a reader
 * paging the view of a large workflow reads and folds its journal once, not once per page. A
 * journal that grew (a live run) or changed has another stamp and is folded again.
 */
const folded = new Map<string, { stamp: string; doc: ViewDocument }>();
const FOLDED_KEPT = 8;

/** The view's document: a JSON array of the calls, paged like every view. */
export function callsDocument(path: string, runId: string): ViewDocument {
  const stats = lstatSync(path, { throwIfNoEntry: false });
  // A link or FIFO planted in the run folder is no journal pi-flow wrote.
  if (stats === undefined || !stats.isFile()) return memoryDocument("[]");
  if (stats.size > CALLS_JOURNAL_MAX_BYTES) {
    throw new FlowError("run_unavailable", `Run ${runId}'s journal is over ${CALLS_JOURNAL_MAX_BYTES} bytes, more than the calls view folds in memory; its summary, output and diagnostics views page without that bound.`);
  }
  const stamp = `${runId}:${stats.ino}:${stats.size}:${stats.mtimeMs}`;
  const kept = folded.get(path);
  if (kept?.stamp === stamp) return kept.doc;
  let journal: string;
  try {
    journal = readEvidenceText(path);
  } catch {
    return memoryDocument("[]");
  }
  const list = new CallList(() => readEarlierLaunch(dirname(path)));
  classifyJournalText(journal, runId, (line) => list.add(line));
  const doc = memoryDocument(JSON.stringify(list.calls));
  folded.delete(path);
  folded.set(path, { stamp, doc });
  if (folded.size > FOLDED_KEPT) folded.delete(folded.keys().next().value!);
  return doc;
}
