/**
 * The set-up every dbos-backend test file shares: a flow sandbox with a project folder, one
 * Postgres cluster of the file's own (started in beforeAll), and every `flow` process the file
 * starts, killed if still running before the cluster and the files go (a test that failed half-way
 * leaves its workers). A file fails when one of its flow processes printed a deprecation of pg's
 * (an error in pg 9).
 */
import { copyFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { DBOSClient } from "@dbos-inc/dbos-sdk";
import pg from "pg";
import { afterAll, beforeAll, expect } from "vitest";
import { closeFleets } from "../../src/backends/index.ts";
import { applicationVersion, CHILD_QUEUE, CHILD_WORKFLOW } from "../../src/backends/names.ts";
import type { RemoteChildRequest, RemoteChildResult } from "../../src/backends/remote-child.ts";
import { flowSandbox, PROJECT_ROOT, startFlow, type FlowSandbox, type RunningFlow } from "../cli/support.ts";
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
    const ended = await Promise.all(started.map((running) => running.done));
    await closeFleets(); // this process's own coordinator connections, before their server goes
    await cluster?.stop();
    sandbox.dispose();
    // What pg deprecates (one client given a query while it runs another) fails in pg 9: no flow process of the file may print it.
    const deprecated = ended.flatMap(({ stderr }) => stderr.split("\n").filter((line) => line.includes("pg@9")));
    expect(deprecated, "a flow process printed pg's deprecation warning").toEqual([]);
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

/**
 * A child as a coordinator hands one to the workers, for tests that enqueue it themselves: workflow
 * `wf_<id>/agent/0`, run `ag_<id>`, the built-in explorer role, no model; `overrides` replace fields.
 */
export function childRequest(id: string, overrides: Partial<RemoteChildRequest> = {}): RemoteChildRequest {
  return {
    workflowId: `wf_${id}/agent/0`,
    runId: `ag_${id}`,
    harness: "pi",
    model: null,
    profile: { name: "explorer", description: "d", systemPrompt: "s", defaultContext: { mode: "none" }, source: "builtin" },
    task: { agent: "role:explorer", description: `Part ${id}` },
    prompt: "Look.",
    cwd: ".",
    loading: { projectTrusted: false, isolated: false },
    ...overrides,
  };
}

/** The built-in worker role, for a request whose child runs commands. */
export const WORKER_PROFILE: RemoteChildRequest["profile"] = { name: "worker", description: "d", systemPrompt: "s", defaultContext: { mode: "none" }, source: "builtin" };

/**
 * Enqueues `child` for the workers as the coordinator does, under `workflowID` (its own by default);
 * `getResult` gives its answer, looked for every 100 ms (DBOS's default, once a second, costs each
 * test up to a second per answer).
 */
export async function enqueueChild(client: DBOSClient, child: RemoteChildRequest, workflowID = child.workflowId): Promise<{ getResult(): Promise<RemoteChildResult> }> {
  const handle = await client.enqueue<(child: RemoteChildRequest) => Promise<RemoteChildResult>>(
    { workflowName: CHILD_WORKFLOW, queueName: CHILD_QUEUE, workflowID, appVersion: applicationVersion() },
    child,
  );
  return { getResult: () => handle.getResult({ pollingIntervalMs: 100 }) };
}

/**
 * Installs test/fixtures/fleet/shutdown-marker.ts as a global extension of the sandbox's Pi: a
 * worker's child session that ends appends a line to the file FLOW_SHUTDOWN_MARKER names.
 */
export function installShutdownMarker(sandbox: FlowSandbox): void {
  mkdirSync(join(sandbox.agentDir, "extensions"), { recursive: true });
  copyFileSync(join(PROJECT_ROOT, "test", "fixtures", "fleet", "shutdown-marker.ts"), join(sandbox.agentDir, "extensions", "shutdown-marker.ts"));
}

/**
 * A pool of a test's own on the tests' Postgres. pg's `pool.end()` resolves once its clients are
 * told to end, not once their connections have closed, so the cluster's stop when the file ends can
 * reach one still closing; its error then went to a pool with no listener, an uncaught exception
 * that failed a CI run whose tests had all passed. An idle client's error is dropped; a query's
 * still reaches the test.
 */
export function testPool(url: string, max: number): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max });
  pool.on("error", () => undefined);
  return pool;
}
