// One child run on its harness, standing on the run lifecycle (startRun): its launch evidence, its
// steering inbox, its worktree, its trace, and what its settle writes. It takes a PreparedChild
// (prepare-child.ts) and does no check of its own: what could be refused was refused before.
import type { RunView } from "../../contract/run-schema.ts";
import { noteUndeliveredSteer, SteeringInbox, createHarness, zeroUsage, STUBBED, stoppedByTimeout, unreadBecause, type ChildProgress, type ChildResult } from "../../harnesses/index.ts";
import { printable, runFiles, type RunWriter, type SettleResult } from "../../runs/index.ts";
import { diagnosticEntry } from "./diagnostic-entry.ts";
import { childSessionFile } from "./resume-source.ts";
import { registerSteerTarget } from "./steer-targets.ts";
import type { Slots } from "./slots.ts";
import { childProjectTrusted } from "../../trust/project-trust.ts";
import { startRun } from "../lifecycle/index.ts";
import { fleetHarness } from "../../backends/run-on-fleet.ts";
import { placeChild, RUNS_ON_COORDINATOR } from "./fleet-placement.ts";
import { finishIsolation, isolationWorktree, startIsolation, worktreeChanges, type PendingIsolation } from "../../isolation/index.ts";
import { runTraceparent, traceRun, traced } from "../../telemetry/index.ts";
import type { LaunchEnvironment, PreparedChild } from "./launch-types.ts";

export type { ChildCall, LaunchEnvironment } from "./launch-types.ts";

/** The receipt warning of a child that runs without some tool its profile asks for. */
export const TOOLS_WITHHELD = "tools_withheld";

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
  /** A workflow's agent() call: its fleet workflow ID (`<rootRunId>/agent/<index>`); a delegation's is `<runId>/delegate` (fleet-placement.ts). */
  fleetWorkflowId?: string;
}

/**
 * A settled child, with its whole canonical value (redacted, as it was saved) even when the view
 * delivers it by reference: a workflow's agent() hands it to the script.
 */
export type SettledChild = SettleResult;

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
  const { call, profile, harness, model, modelLabel } = prepared;
  const { withheld } = prepared.tools;
  // Only the pi harness takes messages while it runs; a CLI child is registered as not steerable.
  const inbox = harness === "pi" ? new SteeringInbox() : undefined;
  let trace!: ReturnType<typeof traceRun>;
  let isolating: PendingIsolation | undefined;
  // On the dbos backend a child is queued until a worker takes it (run-on-fleet.ts).
  const placement = placeChild(prepared, env, options.fleetWorkflowId);
  const onFleet = placement.where === "fleet";
  return startRun<ChildResult>({
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
        ...(prepared.resume ? { correlationId: prepared.resume.correlationId } : {}),
      },
      launch: {
        ...(options.toolCallId ? { toolCallId: options.toolCallId } : {}),
        harness,
        model: modelLabel,
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
        prompt: prepared.prompt, // last: the run report reads the fields before it from a launch's first page
      },
    },
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.slots ? { slots: options.slots } : {}),
    ...(onFleet ? { workMarksRunning: true } : {}),
    ...(call.timeoutMs !== undefined ? { timeoutMs: call.timeoutMs } : {}),
    prepare: (writer) => {
      trace = traceRun(() => ({ ...traced(writer.view()), kind: "agent", model: modelLabel ?? undefined, prompt: prepared.prompt }));
      // The worktree is made while the run waits for its slot.
      isolating = prepared.worktree ? startIsolation(prepared.worktree, writer.runId, env.runs.scope.home, { evidence: writer, ...(prepared.keptChangesMax ? { keptChangesMax: prepared.keptChangesMax } : {}) }) : undefined;
      if (placement.where === "here" && placement.reason) writer.appendDiagnostic({ level: "info", code: RUNS_ON_COORDINATOR, message: placement.reason });
      if (withheld.length > 0) {
        writer.appendDiagnostic({ level: "warn", code: TOOLS_WITHHELD, message: `runs without ${withheld.join(", ")}: the parent session does not hold them` });
      }
      const unregister = registerSteerTarget(writer.runId, {
        harness,
        inbox,
        // Queued again when a worker gives it back: a steer then waits for the next one to take it.
        ...(onFleet ? { waitsFor: "a background slot or a flow worker to take it (again, if a worker gave it back)" } : {}),
        record: (message, held) => {
          writer.journal({ t: "event", name: "steer", data: { message, held } });
          const when = held ? "held until the child's session starts" : "queued for the child's next model request";
          writer.appendDiagnostic({ level: "info", code: "steer", message: `steer ${when}: ${message}` });
        },
        refused: (reason) => writer.appendDiagnostic({ level: "warn", code: "steer_refused", message: `steer refused (and any more until one is accepted): ${reason}` }),
        undelivered: (messages, why) => {
          for (const message of messages) noteUndeliveredSteer(writer, why, message);
        },
      });
      return (result: ChildResult) => unregister(unreadBecause(result));
    },
    work: async (writer, signal) => {
      // A stopped child (cancel, timeout, its parent's abort) reads no more steers: later ones answer
      // terminal, and those it had not read yet are noted as not delivered when it settles.
      if (signal.aborted) inbox?.close();
      else signal.addEventListener("abort", () => inbox?.close(), { once: true });
      const { resume } = prepared;
      // A worktree child works in its worktree, in the same subdirectory as the parent's cwd.
      const worktree = isolating ? await isolationWorktree(isolating, signal) : undefined;
      const cwd = worktree?.cwd ?? prepared.cwd;
      const fleet = env.fleet && placement.where === "fleet" ? { workflowId: placement.workflowId(writer.runId), harness, model: modelLabel, projectCwd: env.cwd, writer, traceparent: runTraceparent(writer.runId), correlationId: writer.view().correlationId } : undefined;
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
        ...(worktree && isolating ? { worktree: worktreeChanges(worktree), worktreeRoots: { worktree: worktree.path, repository: isolating.repo.root, gitDir: isolating.repo.commonDir } } : {}),
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
        ...(env.sharedResources ? { sharedResources: env.sharedResources } : {}),
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
      try {
        return await settleChild(writer, result);
      } catch (error) {
        trace.unsettled(error); // the run's span ends even so: the trace keeps the run
        throw error;
      }
    },
  });

  async function settleChild(writer: RunWriter, result: ChildResult): Promise<SettledChild> {
    const changes = isolating ? await finishIsolation(isolating, runFiles(env.runs.scope, writer.runId), env.runs.scope.home, writer) : undefined;
    const written = writer.settle({
      ...(changes ? { changes } : {}),
      outcome: result.outcome,
      ...(result.outcome === "succeeded" ? { value: result.value, structured: call.outputSchema !== undefined } : {}),
      ...(result.error ? { error: { code: result.outcome === "succeeded" ? "failed" : result.outcome, message: result.error.message } } : {}),
      usage: result.usage,
    });
    const warnings = [...written.warnings, ...(withheld.length > 0 ? [TOOLS_WITHHELD] : []), ...(harness === "stub" ? [STUBBED] : []), ...(isolating?.warnings ?? [])];
    const settledRun = { ...written, warnings };
    // The span and the caller get the value as settling redacted and saved it: a long answer is
    // not scanned again (the redaction memo holds it).
    trace.end(settledRun.view, written.value);
    return settledRun;
  }
}
