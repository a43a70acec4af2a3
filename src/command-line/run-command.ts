import { renameSync, rmSync, statSync } from "node:fs";
import { isAbsolute, join, relative, resolve } from "node:path";
import { fail, type Envelope } from "../contract/envelope.ts";
import { FlowError } from "../contract/errors.ts";
import type { RunView } from "../contract/run-schema.ts";
import { loadCassette, formatLine, recordedHeader, stubHeader, STUBBED, type CassetteHeader } from "../harnesses/index.ts";
import { createStagedFile, errorCode, redactText, stagingPathFor } from "../runs/index.ts";
import type { WorkflowDetails } from "../tools/workflow.ts";
import type { SelectedWorkflow } from "../orchestrator/workflow/index.ts";
import type { ParsedWorkflow } from "../../runtime/index.ts";
import { shellQuote } from "./args.ts";
import { EXIT, exitCodeFor, reportError, withCode, writeErrorLine } from "./exit.ts";
import type { HeadlessSession } from "./headless.ts";
import { createProgressView, seconds, type ProgressView } from "./progress.ts";
import { planRun, runAsChildrenSeeIt, targetTitle, type RunPlan } from "./run-plan.ts";
import { flushTelemetryBeforeExit, startTelemetry } from "./telemetry.ts";
import { counted } from "../ui/index.ts";

type WorkflowEnvelope = Envelope<{ run: RunView }, { run: RunView | null }>;

const NO_MODEL =
  "No model to run the children on. Log in to a provider with pi (/login) or set a default model in Pi's settings, pass --model provider/id, replay a cassette with --replay FILE, or try the workflow with --stub.";

const STUB_NOTE = "--stub: no model is called; every child is answered with a value generated from its outputSchema, or a text naming it";

/** Writes a refusal the way every refused run reports it; with --json the receipt goes to stdout too. */
function refuse(error: FlowError, json: boolean): number {
  const code = reportError(error);
  // Redacted, as the error line is: a message may quote what it refused (JSON.parse quotes --args).
  if (json) process.stdout.write(`${JSON.stringify(fail("external_workflow", "run", error.code, redactText(error.message).text, { run: null }), null, 2)}\n`);
  return code;
}

/** The flow command's own settings for this run: its flags win over Pi's settings and the environment. */
function flowSettingsFor(plan: RunPlan, recordTo: string | undefined): Record<string, unknown> | undefined {
  if (plan.stub) return { stub: { seed: plan.stub.seed, every: true }, ...(recordTo ? { record: { cassette: recordTo } } : {}) };
  if (plan.replay) return { replay: { cassette: plan.replay.cassette, mode: plan.replay.mode, every: true } };
  if (recordTo) return { record: { cassette: recordTo } };
  return undefined;
}

/**
 * `--record FILE` replaces FILE, but only with a run that launched: children are recorded into a
 * file beside it (created exclusively under an unguessable name), which takes FILE's place once
 * the run has been accepted; a run refused before launch leaves FILE as it was.
 */
interface StagedCassette {
  /** Where the children are recorded until the run settles; undefined without --record. */
  path: string | undefined;
  /** Creates the staged cassette with its header; configuration_invalid when it cannot be. */
  create(header: CassetteHeader): void;
  settle(launched: boolean): void;
}

function stagedCassette(target: string | undefined): StagedCassette {
  const path = target === undefined ? undefined : stagingPathFor(target);
  let created = false;
  let settled = false;
  return {
    path,
    create(header) {
      if (target === undefined || path === undefined) return;
      try {
        createStagedFile(path, formatLine(header));
        created = true;
      } catch (error) {
        throw new FlowError("configuration_invalid", `The cassette ${target} cannot be written (${errorCode(error) ?? "error"}).`);
      }
    },
    settle(launched) {
      if (settled || !created || target === undefined || path === undefined) return;
      settled = true;
      if (!launched) return void rmSync(path, { force: true });
      try {
        renameSync(path, target);
      } catch (error) {
        // The recording is evidence: keep it where it is and say so.
        process.stderr.write(`flow: the cassette could not replace ${target} (${errorCode(error) ?? "error"}); it is kept at ${path}\n`);
      }
    },
  };
}

/** Everything that can be refused once the session is there, before anything launches. */
async function checkBeforeLaunch(plan: RunPlan, headless: HeadlessSession, cassette: StagedCassette, projectTrusted: boolean): Promise<void> {
  if (!headless.callableToolNames().includes("external_workflow")) {
    throw new FlowError("configuration_invalid", "external_workflow is not registered here (PI_FLOW_WORKFLOWS=off turns it off): flow run needs it.");
  }
  if ("workflow" in plan.target) {
    // A misspelled name is the first thing to say, before any question of models.
    const [{ parseSelected, selectWorkflow, workflowDirs }, { flowHome }] = await Promise.all([import("../orchestrator/workflow/sources.ts"), import("./project-runs.ts")]);
    let selected: SelectedWorkflow;
    try {
      selected = selectWorkflow({ workflow: plan.target.workflow }, workflowDirs(plan.cwd, flowHome(), projectTrusted));
    } catch (error) {
      throw withScriptFileHint(error, plan.target.workflow, plan.cwd);
    }
    const workflow = parseSelected(selected);
    // A saved workflow gets the checks its file would get run by path.
    await checkScriptSource(selected.text, selected.label, plan, headless, projectTrusted);
    await checkArgsFlag(workflow, plan.args, selected.label);
  }
  if ("file" in plan.target) {
    const { source, label } = plan.target;
    const workflow = await checkScriptSource(source, label, plan, headless, projectTrusted);
    await checkArgsFlag(workflow, plan.args, label);
  }
  if ("resume" in plan.target) {
    // The named run decides first: a succeeded run runs nothing, and a refused one is refused
    // for its own reason, whatever models this machine has.
    const [{ storeOfRun }, { planResume }] = await Promise.all([import("./project-runs.ts"), import("../orchestrator/workflow/resume/plan.ts")]);
    const store = storeOfRun(plan.cwd, plan.target.resume);
    if ("succeeded" in planResume(store, plan.target.resume)) return;
  }
  if (plan.replay) {
    if (plan.model) process.stderr.write("flow: --model is not used with --replay: every child is answered from the cassette.\n");
    return;
  }
  if (plan.stub) process.stderr.write(`flow: ${STUB_NOTE} (seed ${plan.stub.seed}).\n`);
  else if (plan.model) await headless.useModel(plan.model);
  else if (!(await headless.hasUsableModel())) throw new FlowError("model_unavailable", NO_MODEL);
  cassette.create(plan.stub ? stubHeader(plan.stub.seed) : recordedHeader());
}

/**
 * What flow check finds in a script, before anything launches: meta, the tools.* and agent()
 * options it writes literally (a literal outputSchema that is no JSON Schema), and the roles,
 * agent definitions and workflows it names literally. Each would fail mid-run, after the children
 * before it have run. Throws script_invalid listing every problem, with file positions.
 */
async function checkScriptSource(source: string, label: string, plan: RunPlan, headless: HeadlessSession, projectTrusted: boolean): Promise<ParsedWorkflow> {
  const [{ checkWorkflowSource, formatProblem, literalTargetProblems }, { knownNames }] = await Promise.all([import("../orchestrator/workflow/index.ts"), import("./check.ts")]);
  const checked = await checkWorkflowSource(source, label, () => headless.callableToolNames());
  const problems = checked.workflow ? literalTargetProblems(source, label, knownNames(plan.cwd, projectTrusted)) : checked.problems;
  if (problems.length > 0 || !checked.workflow) throw new FlowError("script_invalid", problems.map(formatProblem).join("\n"));
  return checked.workflow;
}

/**
 * --args against the workflow's meta.args, as external_workflow checks them, but a required
 * argument left out is said the way this caller passes it: `--args '{"target": "…"}'`. Also
 * before any question of models: the input is refused first.
 */
async function checkArgsFlag(workflow: ParsedWorkflow, args: Record<string, unknown> | undefined, label: string): Promise<void> {
  const { checkArgs } = await import("../orchestrator/workflow/sources.ts");
  await checkArgs(workflow, args, label, undefined, (example, count) => `give ${count === 1 ? "it" : "them"} as --args ${shellQuote(example)}`);
}

/**
 * `flow run my-flow` beside my-flow.js: a name is looked up among saved workflows only, so the
 * refusal says the file is there and how to run it.
 */
function withScriptFileHint(error: unknown, name: string, cwd: string): unknown {
  if (!(error instanceof FlowError) || error.code !== "selection_invalid") return error;
  const file = [resolve(`${name}.js`), join(cwd, `${name}.js`)].find((path) => statSync(path, { throwIfNoEntry: false })?.isFile());
  if (file === undefined) return error;
  const fromHere = relative(process.cwd(), file);
  const shown = fromHere.startsWith("..") || isAbsolute(fromHere) ? file : fromHere.includes("/") ? fromHere : `./${fromHere}`;
  return new FlowError("selection_invalid", `${error.message} ${shown} is a script file: run it by its path (flow run ${shellQuote(shown)}), or save it in .pi/flow/workflows/ to run it by name.`);
}

function toolParams(plan: RunPlan): Record<string, unknown> {
  if ("resume" in plan.target) return { resume: plan.target.resume };
  const args = plan.args ? { args: plan.args } : {};
  if ("workflow" in plan.target) return { workflow: plan.target.workflow, ...args };
  return { script: plan.target.source, description: plan.target.label.slice(0, 200), ...args };
}

function isEnvelope(value: unknown): value is WorkflowEnvelope {
  return value !== null && typeof value === "object" && "ok" in value && "data" in value;
}

/**
 * The command that shows this run, to paste where the user stands: with --cwd when the run's
 * project is not the current folder, and through npx when flow itself was started by npx.
 */
export function inspectHint(runId: string, projectDir: string): string {
  const command = process.env.npm_lifecycle_event === "npx" ? "npx flow" : "flow";
  const fromHere = relative(process.cwd(), projectDir);
  const dir = fromHere.length > 0 && fromHere.length < projectDir.length ? fromHere : projectDir;
  return `${command} runs show ${runId}${fromHere === "" ? "" : ` --cwd ${shellQuote(dir)}`}`;
}

function settledLine(run: RunView, projectDir: string, stubbed: boolean): string {
  const outcome = run.state.outcome ?? run.state.status;
  // `failed` counts failed agent() calls, including calls refused before a child started.
  const failed = run.children?.failed ?? 0;
  const replayed = run.children?.replayed === undefined ? "" : ` (${counted(run.children.replayed, "call", "calls")} replayed from ${run.task.resumedFrom ?? "the journal"}, ${run.children.live ?? 0} live)`;
  const children = run.children ? `: ${counted(run.children.count, "child", "children")}, ${counted(failed, "failed agent() call", "failed agent() calls")}${replayed}` : "";
  const stub = stubbed ? " Stubbed: every answer was generated, no model was called." : "";
  return `run ${run.runId} ${outcome} in ${seconds(run.timing.durationMs ?? 0)}${children}.${stub} Inspect it with: ${inspectHint(run.runId, projectDir)}`;
}

/** Ctrl-C (or SIGTERM, SIGHUP) once cancels the run (children too) and waits for its journal; twice leaves at once. */
function watchInterrupts(controller: AbortController, progress: () => ProgressView | undefined): { interrupted(): boolean; stop(): void } {
  let count = 0;
  const onSigint = () => {
    count++;
    if (count > 1 || controller.signal.aborted) process.exit(EXIT.interrupted);
    controller.abort();
    const message = "interrupted: cancelling the run and its children (Ctrl-C again to quit at once)";
    const view = progress();
    if (view) view.note(message);
    else process.stderr.write(`flow: ${message}\n`);
  };
  // SIGTERM and SIGHUP (a closed terminal, a supervisor stopping flow) cancel the same way: the
  // default would end Node at once and leave CLI children's process groups running.
  const signals = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
  for (const signal of signals) process.on(signal, onSigint);
  return { interrupted: () => count > 0, stop: () => signals.forEach((signal) => void process.off(signal, onSigint)) };
}

/** A run whose evidence could not all be written (a full disk): its result stands, but say so. */
function warnEvidenceIncomplete(details: WorkflowDetails | undefined): void {
  const errors = details?.evidenceErrors?.length ? ` (${details.evidenceErrors.join("; ")})` : "";
  process.stderr.write(
    `flow: warning evidence_incomplete: the run's result stands, but its evidence could not all be saved${errors}. A full disk? Later, flow runs may list the run as interrupted.\n`,
  );
}

/** Runs one workflow, foreground, and reports it: progress on stderr, the result on stdout. */
async function launch(plan: RunPlan, headless: HeadlessSession, controller: AbortController, interrupted: () => boolean, view: ProgressView): Promise<number> {
  let announced = false;
  const outcome = await headless.callTool("external_workflow", toolParams(plan), {
    signal: controller.signal,
    onUpdate: (partial) => {
      const details = partial.details as WorkflowDetails | undefined;
      if (!details?.runId) return;
      if (!announced) view.started(details.runId, targetTitle(plan));
      announced = true;
      if (details.children) view.children(details.children);
    },
  });
  const envelope = outcome.structured;
  if (!isEnvelope(envelope)) {
    // Pi refused the call before it ran (a validation failure), or the tool threw.
    writeErrorLine(outcome.text);
    return /^Validation failed/.test(outcome.text) ? EXIT.refused : EXIT.failed;
  }
  const run = envelope.data.run;
  if (run) view.finished(settledLine(run, plan.cwd, envelope.warnings.includes(STUBBED)));
  if (run && (await import("./project-runs.ts")).scriptWroteOutput(plan.cwd, run.runId)) {
    process.stderr.write(`Its script wrote to the run's output (console.log, text()), which is not printed here: ${inspectHint(run.runId, plan.cwd)} --view output\n`);
  }
  const incomplete = envelope.warnings.includes("evidence_incomplete");
  if (incomplete) warnEvidenceIncomplete(outcome.details as WorkflowDetails | undefined);
  if (envelope.ok) {
    const { run } = envelope.data;
    const succeeded = incomplete ? EXIT.evidenceIncomplete : EXIT.succeeded;
    if (plan.json) {
      process.stdout.write(`${JSON.stringify(envelope, null, 2)}\n`);
      return succeeded;
    }
    const { readWorkflowValue, storeOfRun } = await import("./project-runs.ts");
    // A resumed run that had already succeeded belongs to the session that ran it.
    const value = run.output.delivery === "inline" ? run.output.value : readWorkflowValue(storeOfRun(plan.cwd, run.runId), run.runId);
    process.stdout.write(`${JSON.stringify(value ?? null, null, 2)}\n`);
    return succeeded;
  }
  const { code, message } = envelope.error;
  writeErrorLine(withCode(message, code));
  if (plan.json) process.stdout.write(`${JSON.stringify(envelope, null, 2)}\n`);
  if (run === null) return exitCodeFor(code);
  return code === "cancelled" && interrupted() ? EXIT.interrupted : EXIT.failed;
}

export async function runCommand(argv: readonly string[], commandLine: string): Promise<number> {
  let plan: RunPlan;
  try {
    plan = planRun(argv);
    if (plan.replay) loadCassette(plan.replay.cassette, plan.replay.mode); // parsed once: the harness reuses it
  } catch (error) {
    if (error instanceof FlowError) return refuse(error, argv.includes("--json"));
    throw error;
  }
  const controller = new AbortController();
  let view: ProgressView | undefined;
  const interrupts = watchInterrupts(controller, () => view);
  let headless: HeadlessSession | undefined;
  const cassette = stagedCassette(plan.record);
  try {
    const flowSettings = flowSettingsFor(plan, cassette.path);
    // Pi loads only now: input refused above costs no Pi start-up.
    const [{ openHeadlessSession }, { commandProjectTrust }] = await Promise.all([import("./headless.ts"), import("./trust.ts")]);
    const projectTrusted = commandProjectTrust(plan.trust, plan.cwd, "run");
    headless = await openHeadlessSession({ cwd: plan.cwd, projectTrusted, extensions: plan.extensions, kept: { commandLine, ran: runAsChildrenSeeIt(plan) }, ...(flowSettings ? { flowSettings } : {}) });
    await checkBeforeLaunch(plan, headless, cassette, projectTrusted);
    if (controller.signal.aborted) return EXIT.interrupted;
    view = createProgressView(process.stderr);
    await startTelemetry(); // configured tracing is loaded before the run's first span, and its headers out of the children's reach
    const code = await launch(plan, headless, controller, interrupts.interrupted, view);
    cassette.settle(code !== EXIT.refused);
    return code;
  } catch (error) {
    if (error instanceof FlowError) return refuse(error, plan.json);
    throw error;
  } finally {
    cassette.settle(false);
    interrupts.stop();
    await headless?.close();
    await flushTelemetryBeforeExit();
  }
}
