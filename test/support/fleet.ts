/**
 * The set-up every dbos-backend test file shares: a flow sandbox with a project folder, one
 * Postgres cluster of the file's own (started in beforeAll), and every `flow` process the file
 * starts, killed if still running before the cluster and the files go (a test that failed half-way
 * leaves its workers).
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { closeFleets } from "../../src/backends/index.ts";
import { flowSandbox, startFlow, type FlowSandbox, type RunningFlow } from "../cli/support.ts";
import { startPostgres, type PostgresCluster } from "./postgres.ts";

export interface FleetFixture {
  sandbox: FlowSandbox;
  /** The project every worker and coordinator of the file works in. */
  project: string;
  /** The file's Postgres; usable inside tests (started in beforeAll). */
  readonly pg: PostgresCluster;
  /** The sandbox's environment with these variables added. */
  env(extra?: Record<string, string>): NodeJS.ProcessEnv;
  /** `flow <args>` as a process of the file's, stopped at the end if still running. */
  start(args: readonly string[], extra?: Record<string, string>): RunningFlow;
  /** `flow worker --name NAME --cwd <project> <args>` on the given database. */
  startWorker(name: string, databaseUrl: string, args?: readonly string[], cwd?: string): RunningFlow;
}

export function fleetFixture(): FleetFixture {
  const sandbox = flowSandbox();
  const project = join(sandbox.root, "project");
  mkdirSync(project);
  let cluster: PostgresCluster | undefined;
  const started: RunningFlow[] = [];
  beforeAll(async () => {
    cluster = await startPostgres();
  });
  afterAll(async () => {
    for (const running of started) if (running.child.exitCode === null && running.child.signalCode === null) running.child.kill("SIGKILL");
    await Promise.all(started.map((running) => running.done));
    await closeFleets(); // this process's own coordinator connections, before their server goes
    await cluster?.stop();
    sandbox.dispose();
  });
  const env = (extra: Record<string, string> = {}) => ({ ...sandbox.env, ...extra });
  const start = (args: readonly string[], extra: Record<string, string> = {}) => {
    const running = startFlow(args, { env: env(extra) });
    started.push(running);
    return running;
  };
  return {
    sandbox,
    project,
    get pg() {
      if (!cluster) throw new Error("the fleet fixture's Postgres starts in beforeAll");
      return cluster;
    },
    env,
    start,
    startWorker: (name, databaseUrl, args = [], cwd = project) => start(["worker", "--name", name, "--cwd", cwd, ...args], { PI_FLOW_DATABASE_URL: databaseUrl }),
  };
}

/**
 * A saved workflow `<name>.js` of one agent() child: description "<Part> part", prompt "Do the
 * <part> part.", its value the workflow's. The faux model's rules match the prompt.
 */
export function oneChildScript(sandbox: FlowSandbox, name: string, part: string): string {
  const description = `${part[0]!.toUpperCase()}${part.slice(1)} part`;
  return sandbox.file(
    `${name}.js`,
    [
      "export const apiVersion = 1;",
      `export const meta = { name: ${JSON.stringify(name)} };`,
      `const run = await agent({ role: "worker", description: ${JSON.stringify(description)}, prompt: ${JSON.stringify(`Do the ${part} part.`)}, context: { mode: "none" } });`,
      "return run.value;",
    ].join("\n"),
  );
}
