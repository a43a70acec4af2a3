import { readFileSync } from "node:fs";

/** The usage lines of each command, kept apart so `flow --help` loads nothing heavy. */
export const RUN_USAGE =
  "flow run <name|path.js>|--resume <runId> [--args JSON|@file.json] [--model provider/id] [--replay FILE [--replay-mode strict|loose]] [--stub [--seed N]] [--record FILE] [--json] [--cwd DIR] [--extension FILE]... [--approve|--no-approve]";
export const CHECK_USAGE = "flow check <path.js>... [--cassette FILE [--replay-mode strict|loose]]... [--cwd DIR] [--extension FILE]... [--approve|--no-approve]";
export const TYPES_USAGE = "flow types [--out FILE] [--cwd DIR] [--extension FILE]... [--approve|--no-approve]";
export const RUNS_USAGE = [
  "flow runs [--limit N] [--json] [--cwd DIR]",
  "flow runs show <runId> [--view summary|final|output|diagnostics|launch|patch|calls] [--json] [--cwd DIR]",
  "flow runs tail <runId> [--cwd DIR]",
  "flow runs report <runId> [--out FILE] [--cwd DIR]",
  "flow runs apply|discard <runId>... [--cwd DIR]",
].join("\n       ");
export const WORKER_USAGE =
  "flow worker [--concurrency N] [--cwd DIR] [--replay FILE [--replay-mode strict|loose]] [--stub [--seed N]] [--model provider/id] [--name NAME] [--extension FILE]... [--approve|--no-approve]";
const HELP_USAGE = "flow help [topic [harness|tool]]   topics: contracts, workflows, harnesses, limits, errors, roles";

export const USAGE = `flow: run pi-flow workflows from the shell, with a model or from a cassette.

Usage:
  ${RUN_USAGE}
  ${CHECK_USAGE}
  ${TYPES_USAGE}
  ${RUNS_USAGE.split("\n").map((line) => line.trim()).join("\n  ")}
  ${WORKER_USAGE}
  ${HELP_USAGE}
  flow --version
  (short forms: -a for --approve, -h for --help, -v for --version)

flow run: a saved workflow (project .pi/flow/workflows/, then your Flow directory, then shipped:
review, map, handoff, parallel-edit) or a script file. Progress goes to stderr, the result to stdout (the
workflow's value as JSON; with --json the whole receipt). Children run on your Pi setup and its
default model, or --model; --replay answers them from a cassette with no model at all; --stub
answers each with a value generated from its outputSchema (--stub --record FILE: a cassette to edit).
--resume continues an interrupted, cancelled or timed-out run of the project from its journal:
children that had finished are not run again.
flow worker: runs the children of workflows coordinated with the dbos backend (PI_FLOW_BACKEND=dbos,
PI_FLOW_DATABASE_URL=postgres://...), until SIGINT or SIGTERM; docs/scale.md.
flow types: TypeScript declarations for writing workflows (default .pi/flow/workflows/flow.d.ts).

Exit codes: 0 succeeded; 1 failed or timed out; 2 refused before launch; 3 succeeded but its evidence could not all be saved; 130 interrupted (Ctrl-C).
Paths on the command line are relative to the shell's directory; --cwd chooses the project.
A project's .pi files (extensions, settings, roles, saved workflows) count only once Pi trusts
it (/trust in pi); --approve trusts it for one command, --no-approve ignores them.
The full reference: docs/cli.md.`;

export function version(): string {
  const manifest = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
  return `pi-flow ${manifest.version}`;
}
