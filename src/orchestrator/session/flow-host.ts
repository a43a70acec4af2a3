import type { ExtensionAPI, ExtensionContext, SessionEntry, ToolInfo } from "@earendil-works/pi-coding-agent";
import { FlowError } from "../../contract/errors.ts";
import { servedView, type RunView, type ServedRunView } from "../../contract/run-schema.ts";
import { formatRunTextFor, groupCommit, openRunStore, PrintedSecretResults, type RunStore, sessionClosed, sessionOpened } from "../../runs/index.ts";
import { captureParentSnapshot, type ParentSnapshot } from "../../parent-context/snapshot.ts";
import { setTelemetryContent } from "../../telemetry/index.ts";
import type { LaunchEnvironment } from "../child/index.ts";
import { bindPublisher, deliverCompletion, forgetSessionFlowState, sessionFlowState, type SessionFlowState } from "./session-state.ts";
import { inheritedParentTools, inheritedSharedResources, inheritedSnapshot } from "../workflow/index.ts";
import { configuredFleet, releaseFleets } from "../../backends/index.ts";
import { SharedResources } from "../../harnesses/index.ts";
import { stubbedRunIds, stubbedRunsNote } from "./stubbed-runs.ts";
import { readSessionSettings, settingValue, type SessionSettings } from "./session-settings.ts";

/** The custom message type of one background run's completion notice (`details`: its RunView). */
export const COMPLETION_MESSAGE_TYPE = "pi-flow-run-completed";
/** The custom message type of a batch of completions (`details`: { runs: RunView[] }). */
export const COMPLETIONS_MESSAGE_TYPE = "pi-flow-runs-completed";
/** A batch message carries each run's full text up to this many bytes, then one line per run. */
const BATCH_TEXT_BYTES = 32 * 1024;

/** The event-bus channel (pi.events) on which each retention pass reports what it removed and kept. */
export const RETENTION_EVENT = "pi-flow:retention";

/** How long a closing session waits for its cancelled background runs to record their end. */
const CLOSE_GRACE_MS = 2000;

/**
 * pi-flow's side of one loaded extension instance: its session's lifecycle (bind, close, settle,
 * background tracking), where its runs live, the per-session state (see session-state.ts) its
 * tools share, and the session's settings as one value (`settings`, session-settings.ts). Created
 * by the factory. Each public member and why it is here: docs/architecture.md, "What FlowHost holds".
 */
export class FlowHost {
  private readonly pi: ExtensionAPI;
  private closed = false;
  /** The session's settings, read at bind. */
  private bound: SessionSettings | undefined;
  /** Told when a background run of this instance's session starts or settles (the widget listens). */
  private readonly backgroundListeners = new Set<() => void>();
  /** The project's resources as the pi children launched in the parent's current turn loaded them. */
  private turnResources = new SharedResources();
  /** The last run store opened: every tool call asks for one, and opening resolves the project's real path and hashes it. */
  private lastStore: { key: string; store: RunStore } | undefined;

  constructor(pi: ExtensionAPI) {
    this.pi = pi;
  }

  session(ctx: ExtensionContext): SessionFlowState {
    return sessionFlowState(ctx.sessionManager.getSessionId());
  }

  /**
   * The session started (or restarted after a reload): this instance reads the session's settings
   * and delivers its completions.
   */
  bind(ctx: ExtensionContext): void {
    this.bound = readSessionSettings(this.pi, ctx);
    // Retention (here or in another process) leaves every run of an open session alone.
    void sessionOpened(this.runStore(ctx).scope);
    // external_runs serves persisted sessions only: in any other, no completion may send the model there.
    const supervised = ctx.sessionManager.getSessionFile() !== undefined;
    bindPublisher(this.session(ctx), { send: (views) => this.publishCompletions(views, supervised, this.runStore(ctx)), idle: () => ctx.isIdle() });
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
    state.completions.unbind();
    if (reason === "reload") return;
    const unmarked = sessionClosed(this.runStore(ctx).scope);
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
    // The records the group commit still holds, and the owner marker's removal, are done before Pi
    // may exit; so is the close of the fleet's database connections no other open session uses.
    await Promise.all([groupCommit().idle(), unmarked, releaseFleets(sessionId)]);
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

  /** Pi's registered tools with their annotations: a resume asks which are safe to replay. */
  toolInfos(): ToolInfo[] {
    return this.pi.getAllTools();
  }

  assertOpen(): void {
    if (this.closed) throw new FlowError("session_closed", "The owning session closed; no run was registered.");
  }

  /** The session's settings, as they were read when it bound (session-settings.ts). */
  get settings(): SessionSettings {
    if (!this.bound) throw new Error("pi-flow's host was asked for settings before its session started.");
    return this.bound;
  }

  /**
   * Applies retention to this project's runs, once per session start, off the start-up path and
   * asynchronously. Live runs and every run of an open session are never touched. Settings: PI_FLOW_RETENTION_DAYS and PI_FLOW_RETENTION_MAX_RUNS, or
   * `flow.retention` ({ maxAgeDays, maxRuns }) in Pi's settings.
   */
  pruneSoon(ctx: ExtensionContext): void {
    const runs = this.runStore(ctx);
    const { retention } = this.settings;
    setImmediate(() => {
      // Retention is housekeeping: a failure here must never disturb the session.
      runs
        .prune(retention)
        .then((report) => this.pi.events.emit(RETENTION_EVENT, report))
        .catch(() => undefined);
    });
  }

  runStore(ctx: ExtensionContext): RunStore {
    const where = { home: this.settings.flowHome, cwd: ctx.cwd, sessionId: ctx.sessionManager.getSessionId() };
    const key = JSON.stringify(where);
    if (this.lastStore?.key !== key) this.lastStore = { key, store: openRunStore(where) };
    return this.lastStore.store;
  }

  /**
   * Everything children of one tool call share. The parent snapshot is the workflow's, when a
   * workflow's tools.* made this call, else the parent's branch as it is when first asked for.
   * The tools bound and the loads of the project's resources likewise: the workflow's, else the
   * session's active tools now and the current turn's loads.
   * `branch`: the parent's branch as the call started, when the call waited its turn to launch since.
   * A setting or trust store that cannot be read refuses the launch (configuration_invalid).
   */
  launchEnvironment(ctx: ExtensionContext, branch?: readonly SessionEntry[]): LaunchEnvironment {
    const settings = this.settings;
    let captured: ParentSnapshot | undefined = inheritedSnapshot();
    const harnesses = settingValue(settings.harnesses);
    setTelemetryContent(settings.flow.telemetry?.content);
    const projectTrusted = settingValue(settings.projectTrusted);
    const fleet = configuredFleet(settings.flow, settings.env, ctx.sessionManager.getSessionId());
    return {
      cwd: ctx.cwd,
      projectTrusted,
      agentDir: settings.agentDir,
      flowUserDir: settings.flowHome,
      parentModel: ctx.model,
      modelRegistry: ctx.modelRegistry,
      snapshot: () => (captured ??= parentSnapshot(branch ?? ctx.sessionManager.getBranch())),
      runs: this.runStore(ctx),
      supervised: ctx.sessionManager.getSessionFile() !== undefined,
      harnesses,
      keptChangesMax: () => settingValue(settings.keptChangesMax),
      parentTools: inheritedParentTools() ?? this.pi.getActiveTools(),
      ...(fleet ? { fleet } : {}),
      sharedResources: inheritedSharedResources() ?? this.turnResources,
    };
  }

  /**
   * The parent started a turn: the children it launches from now on load the project's resources
   * afresh, then share that load with their siblings of the turn (shared-resources.ts). A call's
   * environment keeps the set it started with, so a workflow's children share one set all along.
   */
  turnStarted(): void {
    this.turnResources = new SharedResources();
  }

  /**
   * A background run was accepted. Its completion reaches the parent once: in a completion message,
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

  /** The parent settled: completions that waited for it go out as one message now. */
  parentSettled(ctx: ExtensionContext): void {
    this.session(ctx).completions.parentSettled();
  }

  private publishCompletions(views: RunView[], supervised: boolean, runs: RunStore): void {
    // The session may have gone away without a shutdown event (disposed, replaced): then there is
    // no one to tell, and the runs' evidence and external_runs still hold the results.
    try {
      // Typed as void, but some hosts answer with a promise: a late rejection is the same case.
      // Where external_runs cannot page a result, a run whose text does not fit goes in the next message.
      const groups = supervised ? [views] : fittingGroups(views);
      for (const group of groups) {
        const message: CompletionMessage = group.length === 1 ? singleCompletion(group[0]!, supervised) : batchCompletion(group, supervised);
        // A canned answer is never taken for a model's: the message says which runs the stub harness answered.
        const stubbed = stubbedRunIds(runs, group);
        if (stubbed.length > 0) message.content += `\n\n${stubbedRunsNote(stubbed)}`;
        const sent: unknown = this.pi.sendMessage(message, { deliverAs: "followUp", triggerTurn: true });
        if (sent instanceof Promise) sent.catch(() => undefined);
      }
    } catch {
      // Nothing to do: see above.
    }
  }
}

interface CompletionMessage {
  customType: string;
  content: string;
  display: boolean;
  /** Without refs in a session external_runs cannot supervise: the drawn message never points there. */
  details: ServedRunView | { runs: ServedRunView[] };
}

/**
 * The parent's conversation as its children are given it (captureParentSnapshot), with the secret
 * a command printed taken out of the tool result that holds its output (PrintedSecretResults).
 */
export function parentSnapshot(branch: readonly SessionEntry[]): ParentSnapshot {
  return captureParentSnapshot(branch, new Date(), new PrintedSecretResults());
}

/** Views in settle order, cut into groups whose full texts fit one batch message (a run too large alone is a group of its own). */
function fittingGroups(views: RunView[]): RunView[][] {
  const groups: RunView[][] = [];
  let group: RunView[] = [];
  let left = BATCH_TEXT_BYTES;
  for (const view of views) {
    const bytes = Buffer.byteLength(`${headline(view)}\n${formatRunTextFor(view, false)}`, "utf8");
    if (group.length > 0 && bytes > left) {
      groups.push(group);
      group = [];
      left = BATCH_TEXT_BYTES;
    }
    group.push(view);
    left -= bytes;
  }
  return [...groups, group];
}

const headline = (view: RunView) => `Background run ${view.runId} finished: ${view.state.outcome ?? view.state.status}.`;

function singleCompletion(view: RunView, supervised: boolean): CompletionMessage {
  return { customType: COMPLETION_MESSAGE_TYPE, content: `${headline(view)}\n${formatRunTextFor(view, supervised)}`, display: true, details: servedView(view, supervised) };
}

/**
 * One message for many runs: each run's full text while it fits BATCH_TEXT_BYTES, then a line per
 * run naming its outcome and where its result is (every run is in `details` whole).
 */
function batchCompletion(views: RunView[], supervised: boolean): CompletionMessage {
  const parts = [`${views.length} background runs finished.`];
  let left = BATCH_TEXT_BYTES;
  for (const view of views) {
    const full = `${headline(view)}\n${formatRunTextFor(view, supervised)}`;
    const bytes = Buffer.byteLength(full, "utf8");
    if (bytes <= left) {
      parts.push(full);
      left -= bytes;
    } else {
      left = 0; // keep the order: once one run is short, every later one is too
      // Only where external_runs pages results: elsewhere fittingGroups made every text fit.
      parts.push(`${headline(view)} Its result: external_runs inspect runIds ["${view.runId}"].`);
    }
  }
  return { customType: COMPLETIONS_MESSAGE_TYPE, content: parts.join("\n\n"), display: true, details: { runs: views.map((view) => servedView(view, supervised)) } };
}
