import { getAgentDir, type ExtensionAPI, type ExtensionContext } from "@earendil-works/pi-coding-agent";
import { FlowError } from "../contract/errors.ts";
import type { RunView } from "../contract/run-schema.ts";
import { captureParentSnapshot } from "../context/snapshot.ts";
import { formatRunText, openRunStore, resolveFlowHome, resolveRetention, type RetentionSettings, type RunStore } from "../runs/index.ts";
import type { LaunchEnvironment } from "./launch-child.ts";
import { ResultOwnership } from "./ownership.ts";
import { inheritedSnapshot } from "./workflow-tools.ts";
import { backgroundLimit, Slots } from "./slots.ts";

/** The custom message type of a background run's completion notice. */
export const COMPLETION_MESSAGE_TYPE = "pi-flow-run-completed";

/**
 * What pi-flow keeps for one loaded session: whether it closed, who owns background results, and
 * the background runs to stop when it closes. Created by the extension factory, used by the tools.
 */
export class FlowHost {
  readonly ownership = new ResultOwnership();
  /** Background children of this session beyond the limit wait, queued, for a slot. */
  readonly backgroundSlots = new Slots(backgroundLimit(process.env));
  private readonly pi: ExtensionAPI;
  private closed = false;
  private readonly background = new Map<string, RunStore>();

  constructor(pi: ExtensionAPI) {
    this.pi = pi;
  }

  /**
   * The session shut down: nothing new may register here. On quit or a switch to another session,
   * its background runs are stopped, so their journals end cancelled rather than unfinished. A
   * reload keeps them running: the same session goes on, and external_runs can still wait for them.
   */
  close(reason: "quit" | "reload" | "new" | "resume" | "fork"): void {
    this.closed = true;
    if (reason === "reload") return;
    for (const [runId, runs] of this.background) {
      try {
        runs.cancel(runId, "the owning session closed");
      } catch {
        // Already settled or gone: nothing to stop.
      }
    }
    this.background.clear();
  }

  assertOpen(): void {
    if (this.closed) throw new FlowError("session_closed", "The owning session closed; no run was registered.");
  }

  /**
   * Applies retention to this project's runs, once per session start, off the start-up path. Live
   * runs are never touched. Settings: PI_FLOW_RETENTION_DAYS and PI_FLOW_RETENTION_MAX_RUNS, or
   * `flow.retention` ({ maxAgeDays, maxRuns }) in Pi's settings.
   */
  pruneSoon(ctx: ExtensionContext): void {
    const runs = this.runStore(ctx);
    const settings = (this.pi.getSettings() as { flow?: RetentionSettings }).flow ?? {};
    setImmediate(() => {
      try {
        runs.prune(resolveRetention(settings, process.env));
      } catch {
        // Retention is housekeeping: a failure here must never disturb the session.
      }
    });
  }

  runStore(ctx: ExtensionContext): RunStore {
    return openRunStore({ home: this.flowHome(), cwd: ctx.cwd, sessionId: ctx.sessionManager.getSessionId() });
  }

  flowHome(): string {
    return resolveFlowHome(process.env, getAgentDir());
  }

  /**
   * Everything children of one tool call share, with the parent snapshot frozen now, or inherited
   * from the workflow whose tools.* made this call.
   */
  launchEnvironment(ctx: ExtensionContext): LaunchEnvironment {
    return {
      cwd: ctx.cwd,
      agentDir: getAgentDir(),
      flowUserDir: this.flowHome(),
      parentModel: ctx.model,
      modelRegistry: ctx.modelRegistry,
      snapshot: inheritedSnapshot() ?? captureParentSnapshot(ctx.sessionManager.getBranch()),
      runs: this.runStore(ctx),
    };
  }

  /**
   * A background run was accepted. Its completion reaches the parent once: as a follow-up message,
   * unless a wait owns the result (see ResultOwnership).
   */
  trackBackground(runId: string, runs: RunStore, settled: Promise<{ view: RunView }>): void {
    this.background.set(runId, runs);
    let final: RunView | undefined;
    this.ownership.track(runId, () => {
      if (final) this.publishCompletion(final);
    });
    void settled.then(({ view }) => {
      final = view;
      this.background.delete(runId);
      this.ownership.settled(runId);
    });
  }

  private publishCompletion(view: RunView): void {
    if (this.closed) return;
    const outcome = view.state.outcome ?? view.state.status;
    // The session may have gone away without a shutdown event (disposed, replaced): then there is
    // no one to tell, and the run's evidence and external_runs still hold the result.
    try {
      // Typed as void, but some hosts answer with a promise: a late rejection is the same case.
      const sent: unknown = this.sendCompletion(view, outcome);
      if (sent instanceof Promise) sent.catch(() => undefined);
    } catch {
      // Nothing to do: see above.
    }
  }

  private sendCompletion(view: RunView, outcome: string): void {
    return this.pi.sendMessage(
      {
        customType: COMPLETION_MESSAGE_TYPE,
        content: `Background run ${view.runId} finished: ${outcome}.\n${formatRunText(view)}`,
        display: true,
        details: view,
      },
      { deliverAs: "followUp", triggerTurn: true },
    );
  }
}
