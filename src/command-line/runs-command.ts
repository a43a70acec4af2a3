import { oneLine, terminalText } from "../ui/index.ts";
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { FlowError } from "../contract/errors.ts";
import type { RunView } from "../contract/run-schema.ts";
import { RUN_VIEWS } from "../contract/runs-schema.ts";
import { formatRunText, MAX_LIST_LIMIT, type RunStore } from "../runs/index.ts";
import { boolFlag, intFlag, parseCommand, stringFlag } from "./args.ts";
import { EXIT } from "./exit.ts";
import { RUNS_USAGE } from "./usage.ts";
import { listProjectRuns, readWholeView, storeOfRun, viewPages } from "./project-runs.ts";
import { reportCommand } from "./runs-report.ts";
import { changesCommand } from "./runs-changes.ts";
import { changeStateOf, describeChanges, keptReviewLines, reviewWarning } from "../isolation/apply-runs.ts";

const CWD = { cwd: { type: "string" } } as const;

/** What a listing says of a run's state; an unfinished run another live process owns is running. */
function stateOf(view: RunView, store: RunStore): string {
  // An apply of the run's changes that did not finish left the working tree part way: named where the user looks first.
  if (view.state.outcome) return view.kind === "agent" && changeStateOf(store, view.runId) === "applying" ? `${view.state.outcome}, apply unfinished` : view.state.outcome;
  if (view.state.status === "interrupted_or_uncertain" && store.ownedElsewhere(view.runId)) return "running";
  return view.state.status;
}

function taskOf(view: RunView): string {
  const { task } = view;
  const who = task.workflow ? `${task.workflow} (${task.source ?? "?"})` : (task.role ?? task.subagentType ?? "");
  const parent = task.parentRunId ? ` [in ${task.parentRunId}]` : "";
  return oneLine(`${who}: ${task.description}${parent}`);
}

function list(argv: readonly string[]): number {
  const parsed = parseCommand(argv, { ...CWD, limit: { type: "string" }, json: { type: "boolean" } }, { min: 0, max: 0 }, RUNS_USAGE);
  const cwd = resolve(stringFlag(parsed, "cwd") ?? ".");
  const limit = intFlag(parsed, "limit", 20, 100 * MAX_LIST_LIMIT);
  const all = listProjectRuns(cwd);
  const shown = all.slice(0, limit);
  if (boolFlag(parsed, "json")) {
    process.stdout.write(`${JSON.stringify(shown.map((row) => row.view), null, 2)}\n`);
    return EXIT.succeeded;
  }
  if (all.length === 0) {
    // A folder that is gone may still have runs (they are kept by its path); one that never was is a typo.
    const folder = statSync(cwd, { throwIfNoEntry: false })?.isDirectory() === true;
    process.stderr.write(folder ? `No runs in this project (${cwd}) yet.\n` : `No runs in ${cwd}: it is not a directory (a mistyped --cwd?).\n`);
    return EXIT.succeeded;
  }
  for (const { view, store } of shown) {
    // A record is a file a child's bash may have rewritten: every field it gives is printed as text, escapes dropped.
    const started = oneLine(String(view.timing.startedAt)).replace("T", " ").slice(0, 19);
    const state = oneLine(stateOf(view, store));
    process.stdout.write(`${view.runId}  ${oneLine(view.kind).padEnd(8)}  ${state.padEnd(24)}  ${started}  ${taskOf(view)}\n`);
  }
  if (all.length > shown.length) process.stderr.write(`${all.length - shown.length} older runs not shown: --limit ${all.length}\n`);
  return EXIT.succeeded;
}

async function show(argv: readonly string[]): Promise<number> {
  const parsed = parseCommand(argv, { ...CWD, view: { type: "string" }, json: { type: "boolean" } }, { min: 1, max: 1, missing: "the <runId> to show" }, RUNS_USAGE);
  const cwd = resolve(stringFlag(parsed, "cwd") ?? ".");
  const view = stringFlag(parsed, "view") ?? "summary";
  if (!(RUN_VIEWS as readonly string[]).includes(view)) throw new FlowError("request_invalid", `--view must be one of ${RUN_VIEWS.join(", ")}.`);
  const runId = parsed.positionals[0]!;
  const store = storeOfRun(cwd, runId);
  if (view === "summary") {
    const run = store.view(runId);
    // Kept changes that make the user's tools run code later are named as apply names them, before the user applies.
    const review = run.changes ? await keptReviewLines(store, runId) : [];
    const changes = run.changes ? `\n  changes: ${describeChanges(store, runId, run.changes)}${review.length > 0 ? `\n  ${reviewWarning(runId, review)}` : ""}` : "";
    process.stdout.write(boolFlag(parsed, "json") ? `${JSON.stringify(run, null, 2)}\n` : `${terminalText(formatRunText(run) + changes)}\n`);
    return EXIT.succeeded;
  }
  // Page by page, each written before the next is read: memory stays one page, and a signal is
  // handled between pages however long the view.
  let last = "";
  for await (const payload of viewPages(store, runId, view)) {
    if (view === "final" && !payload.finalAvailable) {
      process.stderr.write(`Run ${runId} has no final result (finalAvailable: false).\n`);
      return EXIT.failed;
    }
    // On a terminal, a run's own text may not drive it (escape sequences); piped, it is passed as written.
    const text = process.stdout.isTTY ? terminalText(payload.page.text) : payload.page.text;
    if (text !== "") await written(text);
    last = text === "" ? last : text;
  }
  if (last !== "" && !last.endsWith("\n")) await written("\n");
  return EXIT.succeeded;
}

/** Resolves once `text` has been handed to stdout: a slow reader slows the pages, not memory. */
const written = (text: string): Promise<void> => new Promise((resolve) => process.stdout.write(text, () => resolve()));

/** New output of a workflow (a JSON array of messages) or an agent (text) since `printed`. */
function newOutput(text: string, encoding: string, printed: number): { chunk: string; printed: number } {
  if (encoding !== "json") return { chunk: text.slice(printed), printed: text.length };
  let messages: { text: string }[];
  try {
    messages = JSON.parse(text) as { text: string }[];
  } catch {
    return { chunk: "", printed }; // read while a message was being appended: take it next time
  }
  const fresh = messages.slice(printed).map((message) => (message.text.endsWith("\n") ? message.text : `${message.text}\n`));
  return { chunk: fresh.join(""), printed: messages.length };
}

/**
 * Follows a run's output until the run settles (or its owner is gone), then exits 0 when it
 * succeeded and 1 otherwise. It reads the same output view as external_runs, polling.
 */
async function tail(argv: readonly string[]): Promise<number> {
  const parsed = parseCommand(argv, CWD, { min: 1, max: 1, missing: "the <runId> to tail" }, RUNS_USAGE);
  const cwd = resolve(stringFlag(parsed, "cwd") ?? ".");
  const runId = parsed.positionals[0]!;
  const store = storeOfRun(cwd, runId);
  let printed = 0;
  for (;;) {
    // Read the state first: output written before the run settled is all there once it has.
    const run = store.view(runId);
    const output = readWholeView(store, runId, "output");
    if (output.text !== "") {
      const next = newOutput(output.text, output.encoding, printed);
      process.stdout.write(process.stdout.isTTY ? terminalText(next.chunk) : next.chunk);
      printed = next.printed;
    }
    if (run.state.status === "done") {
      process.stderr.write(`run ${runId} ${oneLine(String(run.state.outcome))}\n`);
      return run.state.outcome === "succeeded" ? EXIT.succeeded : EXIT.failed;
    }
    if (!run.live && !store.ownedElsewhere(runId)) {
      process.stderr.write(`run ${runId} is ${run.state.status}: no live process owns it.\n`);
      return EXIT.failed;
    }
    await sleep(250);
  }
}

export async function runsCommand(argv: readonly string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === "show") return show(rest);
  if (sub === "tail") return tail(rest);
  if (sub === "report") return reportCommand(rest);
  if (sub === "apply" || sub === "discard") return changesCommand(sub, rest);
  return list(argv);
}
