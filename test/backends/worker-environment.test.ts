/**
 * What a child running on a `flow worker` can read of its worker's process: not the database URL
 * (the fleet's credential), which would let any child, or a prompt injected into one, read every
 * run's prompts and answers and enqueue work every worker runs. A real worker running a pi child
 * on Pi's faux model, whose bash call prints the variable, on the tests' own Postgres.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { DBOSClient } from "@dbos-inc/dbos-sdk";
import { expect, onTestFinished, test } from "vitest";
import { applicationVersion, CHILD_QUEUE, CHILD_WORKFLOW, DBOS_APPLICATION } from "../../src/backends/names.ts";
import type { RemoteChildRequest, RemoteChildResult } from "../../src/backends/remote-child.ts";
import { FAUX_EXTENSION } from "../cli/support.ts";
import { fleetFixture } from "../support/fleet.ts";

const fleet = fleetFixture();

test("a child's bash on a worker does not see PI_FLOW_DATABASE_URL, and the worker still serves the database", async () => {
  // Postgres here trusts loopback: any password opens it, as the real one would for the fleet's role.
  const databaseUrl = fleet.pg.urlFor("worker_environment").replace("postgres@", "postgres:Secret-Pw-123@");
  const leak = join(fleet.sandbox.root, "leak.txt");
  fleet.sandbox.fauxRules([{ match: "Print the database", tool: { name: "bash", arguments: { command: `printf '%s' "\${PI_FLOW_DATABASE_URL:-unset}" > '${leak}'` } }, then: "printed" }]);
  const worker = fleet.start(["worker", "--name", "e1", "--cwd", fleet.project, "--model", "faux/faux-1", "--extension", FAUX_EXTENSION], { PI_FLOW_DATABASE_URL: databaseUrl });
  await worker.stdoutText(/worker e1 ready/);

  const request: RemoteChildRequest = {
    workflowId: "wf_env/agent/0",
    runId: "ag_env",
    harness: "pi",
    model: null,
    profile: { name: "worker", description: "d", systemPrompt: "s", tools: ["bash"], defaultContext: { mode: "none" }, source: "builtin" },
    task: { agent: "role:worker", description: "Env part" },
    prompt: "Print the database URL.",
    cwd: ".",
    loading: { projectTrusted: false, isolated: false },
  };
  const client = await DBOSClient.create({ systemDatabaseUrl: databaseUrl, applicationName: DBOS_APPLICATION });
  onTestFinished(() => client.destroy());
  const handle = await client.enqueue<(child: RemoteChildRequest) => Promise<RemoteChildResult>>(
    { workflowName: CHILD_WORKFLOW, queueName: CHILD_QUEUE, workflowID: request.workflowId, appVersion: applicationVersion() },
    request,
  );
  expect((await handle.getResult()).result).toMatchObject({ outcome: "succeeded", value: "printed" });
  expect(readFileSync(leak, "utf8")).toBe("unset");
  worker.child.kill("SIGTERM");
  const stopped = await worker.done;
  expect(stopped.code).toBe(0);
  expect(stopped.stdout + stopped.stderr).not.toContain("Secret-Pw-123");
}, 180_000);
