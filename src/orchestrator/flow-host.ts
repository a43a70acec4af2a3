import { getAgentDir, type ExtensionAPI, type ExtensionContext } from "@earendil-works/pi-coding-agent";
import { FlowError } from "../contract/errors.ts";
import type { RunView } from "../contract/run-schema.ts";
import { captureParentSnapshot, type ParentSnapshot } from "../context/snapshot.ts";
import { formatRunText, openRunStore, resolveFlowHome, resolveRetention, type RetentionSettings, type RunStore } from "../runs/index.ts";
import type { LaunchEnvironment } from "./launch-child.ts";
import { bindPublisher, deliverCompletion, forgetSessionFlowState, sessionFlowState, type SessionFlowState } from "./session-state.ts";
import { inheritedSnapshot } from "./workflow-tools.ts";

/** The custom message type of a background run's completion notice. */
export const COMPLETION_MESSAGE_TYPE = "pi-flow-run-completed";

/** How long a closing session waits for its cancelled background runs to record their end. */
const CLOSE_GRACE_MS = 2000;

/**
 * pi-flow's side of one loaded extension instance: whether its session closed, where its runs
 * live, and the per-session state (see session-state.ts) its tools share. Created by the factory.
 */
export class FlowHost {
  private readonly pi: ExtensionAPI;
  private closed = false;
  /** Told when a background run of this instance's session starts or settles (the widget listens). */
  private readonly backgroundListeners = new Set<() => void>();

  constructor(pi: ExtensionAPI) {
    this.pi = pi;
  }

  session(ctx: ExtensionContext): SessionFlowState {
    return sessionFlowState(ctx.sessionManager.getSessionId());
  }

  /** The session started (or restarted after a reload): this instance delivers its completions. */
  bind(ctx: ExtensionContext): void {
    bindPublisher(this.session(ctx), (view) => this.publishCompletion(view));
  }

  /**
   * The session shut down: nothing new may register here. A reload keeps background runs going;
   * the new instance takes over their completion messages. On quit or a switch to another session
   * the runs are cancelled, and the shutdown waits (briefly) until their journals say so.
   */
  async close(reason: "quit" | "reload" | "new" | "resume" | "fork", ctx: ExtensionContext): Promise<void> {
    this.closed = true;
    const sessionId = ctx.sessionManager.getSessionId();
    const state = sessionFlowState(sessionId);
    delete state.publish;
    if (reason === "reload") return;
    const ended: Promise<unknown>[] = [];
    for (const [runId, { runs, settled }] of state.background) {
      try {
        runs.cancel(runId, "the owning session closed");
        ended.push(settled);
      } catch {
        // Already settled or gone: nothing to stop.
      }
    }
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_GRACE_MS)));
    await Promise.race([Promise.allSettled(ended), grace]);
    clearTimeout(timer);
    forgetSessionFlowState(sessionId);
  }

  /** Calls `listener` whenever a background run is accepted or settles; returns the unsubscribe. */
  onBackgroundChange(listener: () => void): () => void {
    this.backgroundListeners.add(listener);
    return () => this.backgroundListeners.delete(listener);
  }

  private backgroundChanged(): void {
    for (const listener of this.backgroundListeners) {
      try {
        listener();
      } catch {
        // A display that fails must never disturb a run.
      }
    }
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
   * Everything children of one tool call share. The parent snapshot is the workflow's, when a
   * workflow's tools.* made this call, else the parent's branch as it is when first asked for.
   */
  launchEnvironment(ctx: ExtensionContext): LaunchEnvironment {
    let captured: ParentSnapshot | undefined = inheritedSnapshot();
    return {
      cwd: ctx.cwd,
      agentDir: getAgentDir(),
      flowUserDir: this.flowHome(),
      parentModel: ctx.model,
      modelRegistry: ctx.modelRegistry,
      snapshot: () => (captured ??= captureParentSnapshot(ctx.sessionManager.getBranch())),
      runs: this.runStore(ctx),
    };
  }

  /**
   * A background run was accepted. Its completion reaches the parent once: as a follow-up message,
   * unless a wait owns the result (see ResultOwnership).
   */
  trackBackground(ctx: ExtensionContext, runId: string, runs: RunStore, settled: Promise<{ view: RunView }>): void {
    const state = this.session(ctx);
    state.background.set(runId, { runs, settled });
    this.backgroundChanged();
    let final: RunView | undefined;
    state.ownership.track(runId, () => {
      if (final) deliverCompletion(state, final);
    });
    void settled.then(({ view }) => {
      final = view;
      state.background.delete(runId);
      state.ownership.settled(runId);
      this.backgroundChanged();
    });
  }

  private publishCompletion(view: RunView): void {
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
