// What a child launch is given: the call's options, what the calling session lends to every
// child of one call (workflows and the delegate tool fill them), and the call as prepareChild
// leaves it ready for launchChild.
import type { ModelRegistry } from "@earendil-works/pi-coding-agent";
import type { Api, Model } from "@earendil-works/pi-ai";
import type { ParentSnapshot } from "../../parent-context/snapshot.ts";
import type { HarnessSettings, ChildProfile, ChildTools, ChildModel, SharedResources } from "../../harnesses/index.ts";
import type { RunStore } from "../../runs/index.ts";
import type { FleetChildren } from "../../backends/run-on-fleet.ts";
import type { KeptChangesMax, Repository } from "../../isolation/index.ts";
import type { ResumeSource } from "./resume-source.ts";

/** The options of one child: external_delegate's input, and a workflow's agent() options. */
export interface ChildCall {
  role?: string;
  subagent_type?: string;
  harness?: string;
  description: string;
  prompt: string;
  context?: unknown;
  model?: string;
  outputSchema?: Record<string, unknown>;
  timeoutMs?: number;
  cwd?: string;
  /** The child loads no ambient extension or MCP server (tool-calling contract 14.3); a role file may ask for it too. */
  isolated?: boolean;
  /** `worktree`: the child works in its own git worktree; its changes are kept for apply (src/isolation/). */
  isolation?: "worktree";
  /** Quotas: the first turn or tool call past one stops the child and fails the run. */
  maxTurns?: number;
  maxToolCalls?: number;
  /** A settled agent run of this session whose conversation this child continues. */
  resume?: string;
}

/** What the calling session lends to every child of one call. */
export interface LaunchEnvironment {
  cwd: string;
  /** Whether the project counts as trusted (project-trust.ts): its role files and agent definitions, and its children's project resources, only then. */
  projectTrusted: boolean;
  agentDir: string;
  flowUserDir: string;
  parentModel: Model<Api> | undefined;
  modelRegistry: ModelRegistry;
  /**
   * The parent snapshot, captured on first use and the same frozen object on every later one. A
   * call must ask for it before its first await (so "first use" is when the call started), or
   * never, when no child asks for context.
   */
  snapshot(): ParentSnapshot;
  runs: RunStore;
  /**
   * Whether external_runs serves the session: false in one not saved to a file, where a refusal
   * must not advise a wait or a steer through it. Absent: it does.
   */
  supervised?: boolean;
  /** Replay and recording, as Pi's settings and the environment configure them. */
  harnesses: HarnessSettings;
  /**
   * The most a worktree child's kept changes may hold, as Pi's settings and the environment set it
   * (throws configuration_invalid when malformed: only a worktree child asks). Absent: the default.
   */
  keptChangesMax?: () => KeptChangesMax;
  /**
   * The tools active in the parent session when the call was made (a workflow's: when the
   * workflow call was made): no child of this call gets a tool outside them (child-tools.ts).
   */
  parentTools: readonly string[];
  /** The dbos backend: workflow and delegated children run on `flow worker`s (backends/, fleet-placement.ts); absent, in this process. */
  fleet?: FleetChildren;
  /** The project's resources as the pi children of the parent's turn loaded them, shared where nothing in them is one session's. */
  sharedResources?: SharedResources;
}

/** A call every check has passed (prepare-child.ts), ready for launchChild. */
export interface PreparedChild {
  call: ChildCall;
  profile: ChildProfile;
  harness: string;
  /** `none` for replay: a replayed child needs no model. */
  model: ChildModel;
  /** How the launch evidence names the model (registry.ts's chooseHarness). */
  modelLabel: string | null;
  cwd: string;
  /** Whether the child runs isolated: asked for by the call or by its profile. */
  isolated: boolean;
  /** isolation "worktree": the repository its worktree is made from. */
  worktree?: Repository;
  /** With a worktree: the most its kept changes may hold, when the settings set it. */
  keptChangesMax?: KeptChangesMax;
  prompt: string;
  contextMode: string;
  /** The child's tools within the parent's (what it runs with), and what was withheld or denied. */
  tools: ChildTools;
  resume?: ResumeSource;
}
