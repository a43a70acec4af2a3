import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { HELP_TOPICS } from "../../src/help/answer.ts";
import { workflowsHelp } from "../../src/help/topics.ts";
import { CHECK_USAGE, RUN_USAGE, RUNS_USAGE, TYPES_USAGE, WORKER_USAGE } from "../../src/command-line/usage.ts";
import { flowInProcess } from "./in-process.ts";
import { flow, flowSandbox, PROJECT_ROOT } from "./support.ts";

const sandbox = flowSandbox();
afterAll(() => sandbox.dispose());
const env = sandbox.env;

test("flow --help and flow <command> --help print the usage of every command and every help topic", async () => {
  for (const args of [["--help"], [], ["run", "--help"], ["runs", "show", "-h"], ["help", "--help"]]) {
    const result = await flowInProcess(args, { env });
    expect([result.code, result.stderr]).toEqual([0, ""]);
    for (const line of ["flow run <name|path.js>", "flow check <path.js>...", "flow runs tail <runId>", "flow help [topic"]) expect(result.stdout).toContain(line);
    for (const topic of HELP_TOPICS) expect(result.stdout).toContain(topic);
    expect(result.stdout).toContain("-a for --approve, -h for --help, -v for --version");
  }
  // flow help names the backend workflow children run on, never the database's password.
  const backend = await flow(["help"], { env: { ...env, PI_FLOW_BACKEND: "dbos", PI_FLOW_DATABASE_URL: "postgres://flow:hunter2@db.example:5432/flow" } });
  expect(backend.stdout).toContain("\n\nBackend: dbos on postgres://flow:***@db.example:5432/flow (children run on flow workers)\n");
  expect(backend.stdout).not.toContain("hunter2");
  // libpq also takes the password as a query parameter: every query value is hidden too.
  const query = await flow(["help"], { env: { ...env, PI_FLOW_BACKEND: "dbos", PI_FLOW_DATABASE_URL: "postgres://flow@db.example:5432/flow?password=Tr0ub4dor%263xyz&sslmode=require" } });
  expect(query.stdout).toContain("\n\nBackend: dbos on postgres://flow@db.example:5432/flow?password=***&sslmode=*** (children run on flow workers)\n");
  expect(query.stdout + query.stderr).not.toContain("Tr0ub4dor");
  const version = await flowInProcess(["--version"], { env });
  const manifest = JSON.parse(readFileSync(join(PROJECT_ROOT, "package.json"), "utf8")) as { version: string };
  expect(version.stdout).toBe(`pi-flow ${manifest.version}\n`);
});

test("flow help <topic> prints external_help's text; an unknown topic or command is refused with exit 2", async () => {
  const workflows = await flowInProcess(["help", "workflows"], { env });
  expect(workflows.code).toBe(0);
  // The guide, then the saved workflows this project can run, with their arguments.
  expect(workflows.stdout.startsWith(workflowsHelp())).toBe(true);
  expect(workflows.stdout).toMatch(/^- review \(shipped\): Independent reviewers.* args: \{"type":"object"/m);
  const contract = await flowInProcess(["help", "contracts", "external_runs"], { env });
  expect(JSON.parse(contract.stdout)).toMatchObject({ tool: "external_runs", contractVersion: 1, actions: ["list", "inspect", "wait", "cancel", "steer", "apply", "discard"] });
  const unknown = await flowInProcess(["help", "astrology"], { env });
  expect([unknown.code, unknown.stderr]).toEqual([2, 'flow: Unknown topic "astrology". Known: contracts, workflows, harnesses, limits, errors, roles. (selection_invalid)\n']);
  // A misspelt topic or harness names the one it is near.
  const near = await flowInProcess(["help", "workflow"], { env });
  expect([near.code, near.stderr]).toEqual([2, 'flow: Unknown topic "workflow"; did you mean workflows? Known: contracts, workflows, harnesses, limits, errors, roles. (selection_invalid)\n']);
  expect((await flowInProcess(["help", "harnesses", "cluade"], { env })).stderr).toMatch(/^flow: Unknown harness "cluade"; did you mean claude\? Known: /);
  // A command's name as the topic gives its usage, as `flow <command> --help` does.
  for (const [name, usage] of [["run", RUN_USAGE], ["runs", RUNS_USAGE], ["worker", WORKER_USAGE]] as const) {
    const help = await flowInProcess(["help", name], { env });
    expect([help.code, help.stderr]).toEqual([0, ""]);
    expect(help.stdout.startsWith(`Usage: ${usage}\n`)).toBe(true);
  }
  const command = await flowInProcess(["fly"], { env });
  expect([command.code, command.stderr]).toEqual([2, 'flow: Unknown command "fly"; flow --help lists the commands. (request_invalid)\n']);
  // A typo of a command names the command meant.
  const typo = await flowInProcess(["rnu", "review"], { env });
  expect([typo.code, typo.stderr]).toEqual([2, 'flow: Unknown command "rnu"; did you mean run? flow --help lists the commands. (request_invalid)\n']);
});

test("docs/cli.md shows each command's synopsis as flow --help prints it", () => {
  // A synopsis wrapped over lines in the docs reads as one line: its continuation lines start with "[".
  const docs = readFileSync(join(PROJECT_ROOT, "docs", "cli.md"), "utf8").replace(/\n\s+(?=\[)/g, " ");
  const lines = new Set(docs.split("\n"));
  const synopses = [RUN_USAGE, CHECK_USAGE, TYPES_USAGE, ...RUNS_USAGE.split("\n").map((line) => line.trim()), WORKER_USAGE];
  expect(synopses.filter((synopsis) => !lines.has(synopsis))).toEqual([]);
});
