import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import {
  createExtensionRuntime,
  DefaultResourceLoader,
  SettingsManager,
  type Extension,
  type LoadExtensionsResult,
  type ResourceLoader,
} from "@earendil-works/pi-coding-agent";
import type { ChildProfile } from "./profiles.ts";

/** What a pi child's session is built from: its project's resources and settings. */
export interface ChildResources {
  resourceLoader: ResourceLoader;
  settingsManager: SettingsManager;
}

/** Everything a load of the project's resources depends on: two children with the same setup load the same. */
export interface ResourceSetup {
  cwd: string;
  agentDir: string;
  projectTrusted: boolean;
  isolated: boolean;
  /** The role's system prompt and any structured-answer instruction, appended to Pi's own. */
  appendSystemPrompt: readonly string[];
}

/**
 * Loads the project's resources for a pi child as Pi would for a session of its own: its settings,
 * skills, context files (AGENTS.md), system prompt files and, unless isolated, extensions.
 */
export async function loadChildResources(setup: ResourceSetup): Promise<ChildResources> {
  const { cwd, agentDir } = setup;
  const settingsManager = SettingsManager.create(cwd, agentDir, { projectTrusted: setup.projectTrusted });
  const resourceLoader = new DefaultResourceLoader({
    cwd,
    agentDir,
    settingsManager,
    // Isolated: no ambient extension (and so no MCP server) of the user or the project.
    noExtensions: setup.isolated,
    noPromptTemplates: true,
    noThemes: true,
    appendSystemPrompt: [...setup.appendSystemPrompt],
  });
  await resourceLoader.reload();
  return { resourceLoader, settingsManager };
}

/**
 * The pi children of one parent turn (FlowHost.turnStarted; a workflow keeps its starting turn's)
 * with the same setup share one load of the project's resources, when nothing in it belongs to
 * one session: the load found no extension but pi-flow's own, which installs nothing in a child
 * (an isolated child's finds none), and no extension failed to load (a failure may be passing: a
 * sibling tries again). Extensions are per session (their handlers and state are bound to the
 * session that loaded them), so a load that found another one is never shared: each child then
 * loads its own, as a session of its own would.
 *
 * A shared load is the project as the first child of that setup found it: a context file or
 * setting changed meanwhile reaches the children of the parent's next turn, as the parent's own
 * snapshot does. Setups differ by folder (a worktree child's is its own), agent directory, trust,
 * isolation and the role's appended prompt, so no child ever takes a load it would not have made
 * itself. Every child of a shared load, the first one too, gets a view of it (SnapshotLoader), so
 * no session binds the load's own extension runtime and nothing of a child outlives it there.
 */
export class SharedResources {
  /** A setup's shareable load (null: not shareable, so every child loads its own). */
  private readonly loads = new Map<string, Promise<ResourceSnapshot | null>>();
  /** Profiles selected so far, by what their selection read (the name asked for and the folders it looked in). */
  private readonly profiles = new Map<string, ChildProfile>();

  /**
   * The profile (role or agent definition) a child selects, as the first child of this turn to
   * select it read it: its siblings neither list the role folders nor read its file again, and a
   * role file edited meanwhile reaches the next turn's children, as a context file does. A
   * selection that fails is not kept: the next child selects again, and reports its own failure.
   */
  profile(key: string, select: () => ChildProfile): ChildProfile {
    let profile = this.profiles.get(key);
    if (profile === undefined) {
      profile = select();
      this.profiles.set(key, profile);
    }
    return profile;
  }

  async forChild(setup: ResourceSetup, load: (setup: ResourceSetup) => Promise<ChildResources> = loadChildResources): Promise<ChildResources> {
    const key = JSON.stringify([setup.cwd, setup.agentDir, setup.projectTrusted, setup.isolated, setup.appendSystemPrompt]);
    const shared = this.loads.get(key);
    if (shared) return (await shared)?.view() ?? load(setup);
    const first = load(setup);
    // A load that failed is not kept: the next child loads again, and reports its own failure.
    const snapshot = first.then(ResourceSnapshot.of).catch(() => (this.loads.delete(key), null));
    this.loads.set(key, snapshot);
    const loaded = await first;
    return (await snapshot)?.view() ?? loaded;
  }
}

/**
 * pi-flow's own entry, as Pi loads it from the package manifest; in a child it installs nothing.
 * Resolved when a load is first judged, not when Pi loads pi-flow.
 */
let ownEntry: string | undefined;
const ownEntryPath = (): string => (ownEntry ??= realPath(fileURLToPath(new URL("../../index.ts", import.meta.url))));

function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** Whether a loaded extension is pi-flow's own and registered nothing, as it does in a child. */
function ownInertEntry(extension: Extension): boolean {
  const registered = [extension.handlers, extension.tools, extension.messageRenderers, extension.commands, extension.flags, extension.shortcuts, extension.entryRenderers];
  return (
    [extension.path, extension.resolvedPath].some((path) => realPath(path) === ownEntryPath()) &&
    registered.every((entries) => (entries?.size ?? 0) === 0) &&
    (extension.toolRenderers?.length ?? 0) === 0 &&
    extension.markdownTransformer === undefined
  );
}

/** A load's resources, held for the siblings of the child that made it. */
class ResourceSnapshot {
  private readonly loader: ResourceLoader;
  private readonly settingsManager: SettingsManager;
  private readonly warnings: LoadExtensionsResult["warnings"];

  private constructor(loaded: ChildResources) {
    this.loader = loaded.resourceLoader;
    this.settingsManager = loaded.settingsManager;
    this.warnings = loaded.resourceLoader.getExtensions().warnings;
  }

  /** The load's snapshot, or null when an extension in it is one session's, or failed to load. */
  static of(loaded: ChildResources): ResourceSnapshot | null {
    const { extensions, errors } = loaded.resourceLoader.getExtensions();
    return errors.length === 0 && extensions.every(ownInertEntry) ? new ResourceSnapshot(loaded) : null;
  }

  /** One child's view: the shared resources, and an extension runtime of its own (it holds no extension). */
  view(): ChildResources {
    return { resourceLoader: new SnapshotLoader(this.loader, this.warnings), settingsManager: this.settingsManager };
  }
}

/**
 * A child's ResourceLoader over a shared load. Lists are copied, so a session that changes its own
 * cannot change a sibling's. With no extension there is nothing to extend resources and nothing a
 * child reloads (Pi reloads on the user's /reload, which a child has no way to ask for).
 */
class SnapshotLoader implements ResourceLoader {
  private readonly shared: ResourceLoader;
  private readonly extensions: LoadExtensionsResult;

  constructor(shared: ResourceLoader, warnings: LoadExtensionsResult["warnings"]) {
    this.shared = shared;
    this.extensions = { extensions: [], errors: [], ...(warnings ? { warnings: [...warnings] } : {}), runtime: createExtensionRuntime() };
  }

  getExtensions(): LoadExtensionsResult {
    return this.extensions;
  }

  getSkills(): ReturnType<ResourceLoader["getSkills"]> {
    const { skills, diagnostics } = this.shared.getSkills();
    return { skills: [...skills], diagnostics: [...diagnostics] };
  }

  getPrompts(): ReturnType<ResourceLoader["getPrompts"]> {
    const { prompts, diagnostics } = this.shared.getPrompts();
    return { prompts: [...prompts], diagnostics: [...diagnostics] };
  }

  getThemes(): ReturnType<ResourceLoader["getThemes"]> {
    const { themes, diagnostics } = this.shared.getThemes();
    return { themes: [...themes], diagnostics: [...diagnostics] };
  }

  getAgentsFiles(): ReturnType<ResourceLoader["getAgentsFiles"]> {
    return { agentsFiles: [...this.shared.getAgentsFiles().agentsFiles] };
  }

  getSystemPrompt(): string | undefined {
    return this.shared.getSystemPrompt();
  }

  getSystemPromptSource(): ReturnType<ResourceLoader["getSystemPromptSource"]> {
    return this.shared.getSystemPromptSource();
  }

  getAppendSystemPrompt(): string[] {
    return [...this.shared.getAppendSystemPrompt()];
  }

  getAppendSystemPromptSources(): ReturnType<ResourceLoader["getAppendSystemPromptSources"]> {
    return [...this.shared.getAppendSystemPromptSources()];
  }

  extendResources(): void {
    throw new Error("pi-flow: a child sharing its siblings' resources has no extension to extend them");
  }

  reload(): Promise<void> {
    return Promise.reject(new Error("pi-flow: a child sharing its siblings' resources does not reload them"));
  }
}
