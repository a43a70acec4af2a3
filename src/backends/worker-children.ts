import { realpathSync } from "node:fs";
import { isAbsolute, relative, resolve, sep } from "node:path";
import type { ModelRegistry } from "@earendil-works/pi-coding-agent";
import type { Api, Model } from "@earendil-works/pi-ai";
import { createHarness, zeroUsage, type HarnessSettings, type ChildDiagnostic, type ChildModel, type ChildProgress, type ChildResult, type SessionCheckpoint, type SteeringInbox } from "../harnesses/index.ts";
import { redactText, redactValue } from "../runs/index.ts";
import type { RemoteChildRequest, RemoteChildResult } from "./remote-child.ts";
import type { WorkerChildSession } from "./worker-options.ts";
import { takeoverNote } from "./session-checkpoint.ts";

/** What one `flow worker` lends every child it runs. */
export interface WorkerEnvironment {
  /** This machine's checkout of the project: a child's folder is resolved inside it. */
  cwd: string;
  agentDir: string;
  registry: ModelRegistry;
  /** --stub or --replay: every child is answered that way, whatever harness it asked for. */
  settings: HarnessSettings;
  /** --model: the model of every pi child, whatever the coordinator chose. */
  model?: Model<Api>;
  /** The worker's name, on every result it sends back. */
  name: string;
  /** This worker's own trust in its checkout: a request can narrow it, never widen it. */
  projectTrusted: boolean;
  /** Starts the trace of one child on `harness` (`flow worker` plugs in src/telemetry/); none: untraced. */
  trace?(request: RemoteChildRequest, harness: string): ChildTrace;
  /** This worker continues a child another worker saved the Pi session of; `note` says from where. */
  onContinued?(request: RemoteChildRequest, note: string): void;
}

/** What the trace of a child running on this worker hears: the harness's callbacks, then its result. */
export interface ChildTrace {
  progress(progress: ChildProgress): void;
  diagnostic(entry: ChildDiagnostic): void;
  output(text: string): void;
  end(result: ChildResult): void;
}

const UNTRACED: ChildTrace = { progress() {}, diagnostic() {}, output() {}, end() {} };

/**
 * The child's folder inside this worker's checkout; a request naming a folder outside it is refused.
 * Where the folder really is decides, not how it is spelled: a symbolic link inside the checkout to a
 * folder outside it is outside, and a folder whose name starts with `..` is inside.
 */
function childCwd(request: RemoteChildRequest, env: WorkerEnvironment): string {
  const cwd = resolve(env.cwd, request.cwd);
  const outside = (root: string, path: string) => {
    const inside = relative(root, path);
    return inside === ".." || inside.startsWith(`..${sep}`) || isAbsolute(inside);
  };
  let real: string;
  try {
    real = realpathSync(cwd);
  } catch {
    if (outside(env.cwd, cwd)) throw new Error(`the child's folder ${request.cwd} is outside this worker's project`);
    throw new Error(`the child's folder ${request.cwd} does not exist in this worker's project`);
  }
  if (outside(realpathSync(env.cwd), real)) throw new Error(`the child's folder ${request.cwd} is outside this worker's project`);
  return cwd;
}

/**
 * Whether the child's folder, inside this worker's checkout as spelled, does not exist here: the
 * worker puts the child back for one whose checkout has it (folder-refusals.ts) instead of failing it.
 */
export function childFolderMissing(request: RemoteChildRequest, env: Pick<WorkerEnvironment, "cwd">): boolean {
  const cwd = resolve(env.cwd, request.cwd);
  const inside = relative(env.cwd, cwd);
  if (inside === ".." || inside.startsWith(`..${sep}`) || isAbsolute(inside)) return false; // refused as outside when it runs
  try {
    realpathSync(cwd);
    return false;
  } catch {
    return true;
  }
}

/** What goes back into the database is redacted like every record (the coordinator redacts again). */
function redactedAnswer(result: ChildResult, output: string[], diagnostics: ChildDiagnostic[], worker: string): RemoteChildResult {
  const value = result.value === undefined ? {} : { value: redactValue(result.value).value };
  const error = result.error ? { error: { ...result.error, message: redactText(result.error.message).text } } : {};
  return {
    result: { ...result, ...value, ...error },
    output: output.map((text) => redactText(text).text),
    diagnostics: diagnostics.map((entry) => redactValue(entry).value as ChildDiagnostic),
    worker,
  };
}

const CLI_HARNESSES = new Set(["claude", "codex"]);

function harnessFor(request: RemoteChildRequest, env: WorkerEnvironment): string {
  if (env.settings.stub?.every) return "stub";
  if (env.settings.replay?.every) return "replay";
  return request.harness;
}

function modelFor(harness: string, request: RemoteChildRequest, env: WorkerEnvironment): ChildModel {
  if (harness === "stub" || harness === "replay") return { kind: "none" };
  if (CLI_HARNESSES.has(harness)) return { kind: "cli", name: request.model ?? undefined };
  if (env.model) return { kind: "pi", model: env.model };
  const slash = request.model?.indexOf("/") ?? -1;
  const found = request.model && slash > 0 ? env.registry.find(request.model.slice(0, slash), request.model.slice(slash + 1)) : undefined;
  if (!found) throw new Error(`the model ${request.model ?? "(none)"} is not known to Pi on worker ${env.name}; give the worker --model`);
  return { kind: "pi", model: found };
}

/**
 * A pi child's checkpoints, and the session an earlier worker saved, if any: the child then goes on
 * from it, and its diagnostics say so.
 */
async function piCheckpoint(
  request: RemoteChildRequest,
  env: WorkerEnvironment,
  sessions: WorkerChildSession,
  diagnostic: (entry: ChildDiagnostic) => void,
): Promise<SessionCheckpoint> {
  const checkpoints = await sessions.open((message) => diagnostic({ type: "error", message }));
  const { saved } = checkpoints;
  const note = saved ? takeoverNote(saved, env.name) : null;
  if (!saved || note === null) return { save: checkpoints.save };
  diagnostic({ type: "takeover", message: note });
  env.onContinued?.(request, note);
  return { saved: saved.entries, save: checkpoints.save };
}

/** Runs one child the coordinator sent, on this machine's harness, and gathers what it wrote. */
export async function runRemoteChild(
  request: RemoteChildRequest,
  env: WorkerEnvironment,
  signal: AbortSignal,
  steering?: SteeringInbox,
  sessions?: WorkerChildSession,
): Promise<RemoteChildResult> {
  const output: string[] = [];
  const diagnostics: ChildDiagnostic[] = [];
  let result: ChildResult;
  const harness = harnessFor(request, env);
  const trace = env.trace?.(request, harness) ?? UNTRACED;
  const onDiagnostic = (entry: ChildDiagnostic) => {
    diagnostics.push(entry);
    trace.diagnostic(entry);
  };
  // Only a pi child reads steers while it runs (a worker may run every child on its stub or replay
  // harness): the others' steers are refused at once and go back to the coordinator as undelivered.
  if (harness !== "pi") steering?.refuseAll();
  try {
    const child = await createHarness(harness, { agentDir: env.agentDir, model: modelFor(harness, request, env), registry: env.registry, settings: env.settings });
    // Only a pi child keeps a session to checkpoint and continue; the others run from the start.
    const checkpoint = sessions && harness === "pi" ? await piCheckpoint(request, env, sessions, onDiagnostic) : undefined;
    result = await child.run({
      profile: request.profile,
      task: request.task,
      prompt: request.prompt,
      cwd: childCwd(request, env),
      loading: { projectTrusted: request.loading.projectTrusted && env.projectTrusted, isolated: request.loading.isolated },
      ...(request.outputSchema ? { outputSchema: request.outputSchema } : {}),
      ...(request.quotas ? { quotas: request.quotas } : {}),
      signal,
      onProgress: (progress) => trace.progress(progress),
      onOutput: (text) => {
        output.push(text);
        trace.output(text);
      },
      onDiagnostic,
      ...(steering && harness === "pi" ? { steering } : {}),
      ...(checkpoint ? { checkpoint } : {}),
    });
  } catch (error) {
    const message = `The child could not run on worker ${env.name}: ${error instanceof Error ? error.message : String(error)}`;
    result = { outcome: "failed", error: { code: "failed", message }, usage: zeroUsage() };
  }
  trace.end(result);
  return redactedAnswer(result, output, diagnostics, env.name);
}
