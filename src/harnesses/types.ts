import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import type { Api, Model } from "@earendil-works/pi-ai";
import type { ChildProfile } from "./profiles.ts";
import type { ChildQuotas } from "./quotas.ts";
import type { SteeringInbox } from "./steering.ts";
import type { SharedResources } from "./shared-resources.ts";

/**
 * The model a child runs on: a model of Pi's registry (pi), a CLI's own model name (undefined: the
 * CLI's default), or none at all for a replayed child.
 */
export type ChildModel = { kind: "pi"; model: Model<Api> } | { kind: "cli"; name: string | undefined } | { kind: "none" };

export type ChildOutcome = "succeeded" | "failed" | "cancelled" | "timed_out";

export interface ChildUsage {
  turns: number;
  toolCalls: number;
  inputTokens: number;
  outputTokens: number;
  /** Prompt tokens read from and written to the provider's cache, when it reports them. */
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  /** Cost in US dollars: reported by the harness (the claude CLI), or priced from Pi's model catalog (pi). */
  costUsd?: number;
}

/** What a running child reports as it goes; foreground tools stream it through onUpdate. */
export interface ChildProgress {
  usage: ChildUsage;
  /** What the child is doing now, e.g. "calling read" or "thinking". */
  activity: string;
}

export type ChildDiagnostic =
  /**
   * `id`: the call's id as its harness names it (claude's tool_use id, codex's item id, Pi's
   * toolCallId), when it has one: what ties a result to its call when calls of one tool overlap.
   */
  | { type: "tool_call"; tool: string; args: string; id?: string }
  | { type: "tool_result"; tool: string; isError: boolean; id?: string }
  | { type: "error"; message: string }
  /** The session an external CLI opened for this child: what a later resume continues. */
  | { type: "session"; harness: string; sessionId: string }
  /** What an external CLI wrote to stderr, bounded. */
  | { type: "stderr"; text: string }
  /** The child was answered by the stub harness: no model said it. */
  | { type: "stub"; message: string }
  /** Another worker took the child over and continued the session its earlier worker saved. */
  | { type: "takeover"; message: string }
  /** The harness ran the child with less than its tools allow, and why (`code` names the case). */
  | { type: "narrowed"; code: string; message: string };

/** A worktree child's changes, as cassettes record and replay them (src/isolation/worktree-patch.ts). */
export interface ChildWorktree {
  /** Everything the child changed against its base, as `git diff --binary` writes it; null when nothing. */
  changes(): Promise<Buffer | null>;
  /** Applies a patch to the worktree's files, all or nothing; git's message when it does not apply. */
  apply(patch: Buffer): Promise<{ ok: true } | { ok: false; message: string }>;
}

/** A worktree child's own worktree and the user's working tree it was made from, as top folders. */
export interface WorktreeRoots {
  /** The child's worktree. */
  worktree: string;
  /** The user's working tree (a real path): the child's file tools write none of it outside `worktree`. */
  repository: string;
  /** The repository's common git folder (a real path; outside `repository` when the user works in a linked worktree): its hooks and config are never the child's. */
  gitDir: string;
}

/** Who a child is, as its caller named it: what a cassette keys a recorded answer by. */
export interface ChildTask {
  /** `role:<name>` or `agent:<Pi agent definition>`. */
  agent: string;
  description: string;
  /** The workflow run that started the child; occurrences are counted among its children. */
  parentRunId?: string;
}

export interface ChildRequest {
  profile: ChildProfile;
  task: ChildTask;
  /** The whole prompt: any rendered parent context, then the task. */
  prompt: string;
  cwd: string;
  /** isolation "worktree": the child's own worktree, where replay plays recorded changes and recording reads them. */
  worktree?: ChildWorktree;
  /** isolation "worktree": where the pi harness's write and edit may not go (pi-files.ts). */
  worktreeRoots?: WorktreeRoots;
  /**
   * What the child may load of its own (project-trust.ts): `projectTrusted` false, none of the
   * project's extensions, packages and settings, as the parent session does not load them;
   * `isolated`, no extension or MCP server at all besides what pi-flow gives it.
   */
  loading: { projectTrusted: boolean; isolated: boolean };
  /** A JSON Schema the final answer must satisfy; the answer is then parsed JSON. */
  outputSchema?: Record<string, unknown>;
  /**
   * Aborting stops the child. The reason tells why: a `TimeoutError` DOMException when its time
   * limit fired (see `childTimeout`), anything else is a cancel.
   */
  signal: AbortSignal;
  onProgress(progress: ChildProgress): void;
  /** Assistant text as the child writes it, message by message. */
  onOutput(text: string): void;
  onDiagnostic(entry: ChildDiagnostic): void;
  /** Turn and tool-call limits; the first call past one stops the child and fails the run. */
  quotas?: ChildQuotas;
  /** Messages for the child while it runs; a harness that cannot take them never attaches. */
  steering?: SteeringInbox;
  /**
   * Where the pi harness keeps the child's Pi session (a file of the run's evidence), and the
   * session file of an earlier run to continue with its whole history.
   */
  session?: { file: string; resumeFrom?: string };
  /**
   * The pi harness checkpoints the child's Pi session here (after the prompt is in and after each
   * whole turn) and, when an earlier attempt of this same child saved one, continues it.
   */
  checkpoint?: SessionCheckpoint;
  /** The pi harness: the loads of the project's resources this child shares with its siblings of one parent turn (shared-resources.ts). */
  sharedResources?: SharedResources;
}

/** Where a child running on a worker keeps its Pi session, so another worker can continue it. */
export interface SessionCheckpoint {
  /** The session an earlier attempt saved: the child goes on from its last whole turn. */
  saved?: readonly SessionEntry[];
  /** Takes the session's entries so far; never throws, never waits. */
  save(entries: readonly SessionEntry[]): void;
}

export interface ChildResult {
  outcome: ChildOutcome;
  /** The canonical answer: the final text, or the parsed value when an outputSchema was given. */
  value?: unknown;
  error?: { code: string; message: string };
  usage: ChildUsage;
}

/** Whether a harness can run a child now, as external_help reports it. */
export interface HarnessState {
  name: string;
  available: boolean;
  /** One line: what was found (binary, version), or why it is not available and how to fix that. */
  detail: string;
  binary?: string;
  version?: string;
}

/** A way to run children. A request reaches `run` only after every check that can fail before launch passed. */
export interface Harness {
  readonly name: string;
  run(request: ChildRequest): Promise<ChildResult>;
}
