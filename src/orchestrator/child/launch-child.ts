import { statSync } from "node:fs";
import { resolve } from "node:path";
import { compile, type JsonSchema } from "@earendil-works/pi-schema";
import { FlowError } from "../../contract/errors.ts";
import type { RunView } from "../../contract/run-schema.ts";
import { checkContextRequest, renderContext, selectContext } from "../../context/modes.ts";
import type { ChildProfile } from "../../harnesses/profiles.ts";
import { boundChildTools, type ChildTools } from "../../harnesses/child-tools.ts";
import { checkChildCwd } from "./cwd.ts";
import type { ChildProgress, ChildResult } from "../../harnesses/types.ts";
import { printable, redactValue, runFiles, type SettleResult } from "../../runs/index.ts";
import { diagnosticEntry } from "./diagnostic-entry.ts";
import { SteeringInbox } from "../../harnesses/steering.ts";
import { childSessionFile, resolveResume, type ResumeSource } from "./resume-source.ts";
import { registerSteerTarget } from "./steer-targets.ts";
import { createHarness, modelLabel, resolveModelFor, selectHarness, type ChildModel } from "../../harnesses/registry.ts";
import type { Slots } from "./slots.ts";
import { zeroUsage } from "../../harnesses/usage.ts";
import { STUBBED } from "../../harnesses/stub.ts";
import { childProjectTrusted } from "../../trust/project-trust.ts";
import { askedHarness, childIsolation, selectProfile } from "./profile.ts";
import { stoppedByTimeout } from "../../harnesses/outcomes.ts";
import { startRun } from "../lifecycle/index.ts";
import { fleetHarness } from "../../backends/run-on-fleet.ts";
import { finishIsolation, isolationCwd, isolationRepository, startIsolation, type Repository, type PendingIsolation } from "../../isolation/index.ts";
import { traceRun } from "../../telemetry/index.ts";
import type { ChildCall, LaunchEnvironment } from "./launch-types.ts";

export type { ChildCall, LaunchEnvironment } from "./launch-types.ts";

/** The receipt warning of a child that runs without some tool its profile asks for. */
export const TOOLS_WITHHELD = "tools_withheld";

export interface PreparedChild {
  call: ChildCall;
  profile: ChildProfile;
  harness: string;
  /** `none` for replay: a replayed child needs no model. */
  model: ChildModel;
  cwd: string;
  /** Whether the child runs isolated: asked for by the call or by its profile. */
  isolated: boolean;
  /** isolation "worktree": the repository its worktree is made from. */
  worktree?: Repository;
  prompt: string;
  contextMode: string;
  /** The child's tools within the parent's (what it runs with), and what was withheld or denied. */
  tools: ChildTools;
  resume?: ResumeSource;
}

/** The longest a single child may run, whatever it asks for. */
export const MAX_CHILD_TIMEOUT_MS = 6 * 60 * 60 * 1000;

/** external_delegate's schema bounds description; agent() options reach here without Pi's validation. */
const MAX_DESCRIPTION_CHARS = 200;
/** Role, agent definition, harness and model names. */
const MAX_NAME_CHARS = 200;
const MAX_PATH_CHARS = 4096;
const CONTROL = /[\u0000-\u001f\u007f]/;
const NUL = /\u0000/;

/**
 * A short text option: a typed error for what would otherwise surface as raw Node or filesystem
 * text. Names and paths take no control characters; a description only no NUL.
 */
function checkText(value: string | undefined, what: string, max: number, forbidden = CONTROL): void {
  if (value === undefined) return;
  if (value.length > max) throw new FlowError("request_invalid", `${what} is longer than ${max} characters.`);
  if (forbidden.test(value)) throw new FlowError("request_invalid", `${what} contains a control character (NUL, newline, tab, ...).`);
}

/** The child's working directory. Errors quote only what the caller wrote, never the host's absolute path. */
function resolveCwd(requested: string, base: string): string {
  checkText(requested, "cwd", MAX_PATH_CHARS);
  const cwd = resolve(base, requested);
  let isDirectory = false;
  try {
    isDirectory = statSync(cwd, { throwIfNoEntry: false })?.isDirectory() ?? false;
  } catch {
    // Too long a name, no permission, a loop of links: all mean "not a directory the child can use".
  }
  if (!isDirectory) throw new FlowError("request_invalid", `cwd ${JSON.stringify(requested)} is not a directory.`);
  return cwd;
}

/**
 * The contract's branch rules (external_delegate's schema says them as oneOf/not), in words: a
 * schema check would only say that no branch matched. agent() options are checked here first too.
 */
export function checkTarget(call: { role?: unknown; subagent_type?: unknown; harness?: unknown }): void {
  if (call.role !== undefined && call.subagent_type !== undefined) throw new FlowError("request_invalid", "Give role or subagent_type, not both.");
  if (call.role === undefined && call.subagent_type === undefined) throw new FlowError("request_invalid", "Give role or subagent_type.");
  if (call.subagent_type !== undefined && call.harness !== undefined) {
    throw new FlowError("request_invalid", "subagent_type always runs on the pi harness; leave harness out.");
  }
}

function checkRequest(call: ChildCall, env: LaunchEnvironment): string {
  checkText(call.description, "description", MAX_DESCRIPTION_CHARS, NUL);
  for (const key of ["role", "subagent_type", "harness", "model"] as const) checkText(call[key], key, MAX_NAME_CHARS);
  checkTarget(call);
  // Field types and minimums (maxTurns, maxToolCalls, timeoutMs, ...) were checked against the
  // schema already: by Pi for external_delegate, by checkAgentOptions for agent().
  if (call.resume !== undefined && typeof call.resume !== "string") throw new FlowError("request_invalid", "resume must be a run ID.");
  if (call.timeoutMs !== undefined && call.timeoutMs > MAX_CHILD_TIMEOUT_MS) {
    throw new FlowError("request_invalid", `timeoutMs may be at most ${MAX_CHILD_TIMEOUT_MS}.`);
  }
  if (call.outputSchema !== undefined) {
    try {
      compile(call.outputSchema as JsonSchema);
    } catch (error) {
      throw new FlowError("request_invalid", `outputSchema is not a usable JSON Schema: ${(error as Error).message}`);
    }
  }
  return call.cwd === undefined ? env.cwd : resolveCwd(call.cwd, env.cwd);
}

/**
 * Every check that can fail before launch, in the contract's order, with no side effect:
 * contradictions, then selection, then harness, then model, then context.
 */
export function prepareChild(call: ChildCall, env: LaunchEnvironment): PreparedChild {
  const cwd = checkRequest(call, env);
  const profile = selectProfile(call, env);
  const tools = boundChildTools(profile, env.parentTools);
  if (call.cwd !== undefined) checkChildCwd(call.cwd, cwd, { projectCwd: env.cwd, parentTools: env.parentTools, childTools: tools.effective });
  const resume = call.resume === undefined ? undefined : resolveResume(call.resume, env.runs);
  const asked = askedHarness(call, profile, resume);
  const isolated = childIsolation(call, profile, asked);
  const worktree = isolationRepository(call.isolation, profile.isolation, cwd);
  const harness = selectHarness(asked, env.harnesses);
  const model = resolveModelFor(harness, call.model ?? profile.model, env.parentModel, env.modelRegistry);
  const context = call.context === undefined ? profile.defaultContext : checkContextRequest(call.context);
  // Reading the parent's whole branch costs O(branch); a child that sees none of it skips it.
  const snapshot = context.mode === "none" ? undefined : env.snapshot();
  const contextText = snapshot ? renderContext(selectContext(snapshot, context), snapshot.capturedAt) : "";
  const prompt = contextText === "" ? call.prompt : `${contextText}\n\n<task>\n${call.prompt}\n</task>`;
  const contextMode = context.mode === "recent" ? `recent:${context.turns}` : context.mode;
  return { call, profile, harness, model, cwd, isolated, ...(worktree ? { worktree } : {}), prompt, contextMode, tools, ...(resume ? { resume } : {}) };
}

export interface LaunchOptions {
  background: boolean;
  /** Background children wait here for a free slot; the run is `queued` meanwhile. */
  slots?: Slots;
  /** Foreground only: the parent tool's signal; aborting it cancels the child. */
  signal?: AbortSignal;
  parentRunId?: string;
  /** The Pi tool call that started this run (external_delegate), kept in its launch evidence for correlation. */
  toolCallId?: string;
  onProgress?(progress: ChildProgress): void;
  /** Each piece of assistant text the child writes, as it went to the run's output log (redacted). */
  onOutput?(text: string): void;
  /** A workflow's agent() call: its fleet workflow ID (`<rootRunId>/agent/<index>`), used when env.fleet is set. */
  fleetWorkflowId?: string;
}

/** A settled child, with its whole canonical value (redacted) even when the view delivers it by reference. */
export interface SettledChild extends SettleResult {
  value?: unknown;
}

export interface LaunchedChild {
  runId: string;
  /** The run as it stands once accepted and registered. */
  accepted: RunView;
  /** Settles with the run; never rejects. */
  settled: Promise<SettledChild>;
}

/**
 * Registers the run, then runs the child on its harness, on the one run lifecycle (startRun). The
 * run ends cancelled when the parent's signal (foreground) or an operator cancel aborts it,
 * timed_out when its time limit passes.
 */
export function launchChild(prepared: PreparedChild, env: LaunchEnvironment, options: LaunchOptions): LaunchedChild {
  const { call, profile, harness, model } = prepared;
  const { withheld } = prepared.tools;
  // Only the pi harness takes messages while it runs; a CLI child is registered as not steerable.
  const inbox = harness === "pi" ? new SteeringInbox() : undefined;
  let trace!: ReturnType<typeof traceRun>;
  let isolating: PendingIsolation | undefined;
  // On the dbos backend a workflow's child is queued until a worker takes it (run-on-fleet.ts).
  const onFleet = env.fleet !== undefined && options.fleetWorkflowId !== undefined;
  return startRun<ChildResult, SettledChild>({
    runs: env.runs,
    create: {
      kind: "agent",
      background: options.background,
      status: onFleet || (options.slots && !options.slots.available) ? "queued" : "running",
      task: {
        description: call.description,
        ...(call.role !== undefined ? { role: call.role } : { subagentType: call.subagent_type! }),
        harness,
        ...(options.parentRunId ? { parentRunId: options.parentRunId } : {}),
      },
      launch: {
        ...(options.toolCallId ? { toolCallId: options.toolCallId } : {}),
        harness,
        model: modelLabel(model),
        profile: { name: profile.name, source: profile.source, tools: profile.tools ?? "pi defaults" },
        tools: prepared.tools,
        context: prepared.contextMode,
        cwd: prepared.cwd,
        ...(prepared.isolated ? { isolated: true } : {}),
        ...(prepared.worktree ? { isolation: "worktree" } : {}),
        timeoutMs: call.timeoutMs ?? null,
        structured: call.outputSchema !== undefined,
        ...(call.maxTurns !== undefined ? { maxTurns: call.maxTurns } : {}),
        ...(call.maxToolCalls !== undefined ? { maxToolCalls: call.maxToolCalls } : {}),
        ...(prepared.resume ? { resume: prepared.resume.runId } : {}),
        prompt: prepared.prompt,
      },
    },
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.slots ? { slots: options.slots } : {}),
    ...(onFleet ? { workMarksRunning: true } : {}),
    ...(call.timeoutMs !== undefined ? { timeoutMs: call.timeoutMs } : {}),
    prepare: (writer) => {
      trace = traceRun(() => ({ runId: writer.runId, kind: "agent", task: writer.view().task, model: modelLabel(model) ?? undefined, resumes: prepared.resume?.runId, prompt: prepared.prompt }));
      // The worktree is made while the run waits for its slot.
      isolating = prepared.worktree ? startIsolation(prepared.worktree, writer.runId, env.runs.scope.home) : undefined;
      if (withheld.length > 0) {
        writer.appendDiagnostic({ level: "warn", code: TOOLS_WITHHELD, message: `runs without ${withheld.join(", ")}: the parent session does not hold them` });
      }
      return registerSteerTarget(writer.runId, {
        harness,
        inbox,
        record: (message, held) => {
          writer.journal({ t: "event", name: "steer", data: { message, held } });
          const when = held ? "held until the child's session starts" : "queued for the child's next model request";
          writer.appendDiagnostic({ level: "info", code: "steer", message: `steer ${when}: ${message}` });
        },
        refused: (reason) => writer.appendDiagnostic({ level: "warn", code: "steer_refused", message: `steer refused (and any more until one is accepted): ${reason}` }),
      });
    },
    work: async (writer, signal) => {
      const { resume } = prepared;
      // A worktree child works in its worktree, in the same subdirectory as the parent's cwd.
      const cwd = isolating ? await isolationCwd(isolating) : prepared.cwd;
      const fleet = env.fleet && options.fleetWorkflowId ? { workflowId: options.fleetWorkflowId, harness, model: modelLabel(model), projectCwd: env.cwd, writer } : undefined;
      const child = env.fleet && fleet ? fleetHarness(env.fleet, fleet) : await createHarness(harness, {
        agentDir: env.agentDir,
        model,
        registry: env.modelRegistry,
        settings: env.harnesses,
        ...(resume?.cliSessionId !== undefined ? { resumeSessionId: resume.cliSessionId } : {}),
      });
      const quotas = { maxTurns: call.maxTurns, maxToolCalls: call.maxToolCalls };
      return child.run({
        // The harness sees only the tools the child may have: the bound is the profile's tool list.
        profile: { ...profile, tools: prepared.tools.effective },
        task: {
          agent: call.role !== undefined ? `role:${call.role}` : `agent:${call.subagent_type!}`,
          description: call.description,
          ...(options.parentRunId ? { parentRunId: options.parentRunId } : {}),
        },
        prompt: prepared.prompt,
        cwd,
        loading: { projectTrusted: childProjectTrusted({ cwd: env.cwd, trusted: env.projectTrusted }, prepared.cwd, env.agentDir), isolated: prepared.isolated },
        ...(call.outputSchema ? { outputSchema: call.outputSchema } : {}),
        signal,
        // Activity names a CLI's model or tool as the CLI wrote it: shown on stderr and in the TUI.
        onProgress: (progress) => void (trace.progress(progress), options.onProgress?.({ ...progress, activity: printable(progress.activity) })),
        onOutput: (text) => {
          const written = writer.appendOutput(text).text; // always written, whether anyone listens
          trace.output(written);
          options.onOutput?.(written);
        },
        onDiagnostic: (entry) => void (trace.diagnostic(entry), writer.appendDiagnostic(diagnosticEntry(entry))),
        quotas,
        ...(inbox ? { steering: inbox } : {}),
        ...(harness === "pi"
          ? { session: { file: childSessionFile(env.runs, writer.runId), ...(resume?.piSessionFile ? { resumeFrom: resume.piSessionFile } : {}) } }
          : {}),
      });
    },
    recover: (error, signal): ChildResult => {
      const usage = zeroUsage();
      if (signal.aborted) {
        const timedOut = stoppedByTimeout(signal);
        const outcome = timedOut ? "timed_out" : "cancelled";
        return { outcome, error: { code: outcome, message: `The child was ${timedOut ? "out of time" : "cancelled"} before it ran.` }, usage };
      }
      const message = `The child could not run: ${error instanceof Error ? error.message : String(error)}`;
      return { outcome: "failed", error: { code: "failed", message }, usage };
    },
    settle: async (writer, result): Promise<SettledChild> => {
      const changes = isolating ? await finishIsolation(isolating, runFiles(env.runs.scope, writer.runId), env.runs.scope.home, writer) : undefined;
      const written = writer.settle({
        ...(changes ? { changes } : {}),
        outcome: result.outcome,
        ...(result.outcome === "succeeded" ? { value: result.value, structured: call.outputSchema !== undefined } : {}),
        ...(result.error ? { error: { code: result.outcome === "succeeded" ? "failed" : result.outcome, message: result.error.message } } : {}),
        usage: result.usage,
      });
      const warnings = [...written.warnings, ...(withheld.length > 0 ? [TOOLS_WITHHELD] : []), ...(harness === "stub" ? [STUBBED] : [])];
      const settledRun = { ...written, warnings };
      trace.end(settledRun.view, result.value);
      // A workflow's agent() needs the whole value, also when the receipt can only point to it.
      if (settledRun.view.state.outcome !== "succeeded" || result.value === undefined) return settledRun;
      return { ...settledRun, value: redactValue(result.value).value };
    },
  });
}
