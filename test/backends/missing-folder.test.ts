/**
 * A child whose folder one worker's checkout lacks: that worker puts it back on the queue for one
 * whose checkout has it, and when no live worker has it, the child fails naming the folder and the
 * workers. Real `flow worker`s (--stub) on the tests' own Postgres, each with a checkout of its own.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { DBOSClient } from "@dbos-inc/dbos-sdk";
import { expect, onTestFinished, test } from "vitest";
import { DBOS_APPLICATION } from "../../src/backends/names.ts";
import { childRequest, enqueueChild, fleetFixture } from "../support/fleet.ts";

const fleet = fleetFixture();

test("a child whose folder the worker that took it lacks goes back on the queue and runs on a worker whose checkout has it", async () => {
  const databaseUrl = fleet.pg.urlFor("missing_folder");
  const pulled = join(fleet.sandbox.root, "pulled");
  mkdirSync(join(pulled, "packages", "new"), { recursive: true });
  const having = fleet.startWorker("w2", databaseUrl, ["--stub"], pulled);
  const lacking = fleet.startWorker("w1", databaseUrl, ["--stub"]);
  await Promise.all([having.stdoutText(/worker w2 ready/), lacking.stdoutText(/worker w1 ready/)]);
  // w2 is alive (its heartbeat is fresh) but takes nothing until w1 has refused the child.
  having.child.kill("SIGSTOP");
  onTestFinished(() => void having.child.kill("SIGCONT"));
  const client = await DBOSClient.create({ systemDatabaseUrl: databaseUrl, applicationName: DBOS_APPLICATION });
  onTestFinished(() => client.destroy());
  const handle = await enqueueChild(client, childRequest("newpkg", { cwd: "packages/new" }));
  const refused = await lacking.stdoutText(/(requeued|settled|failed) wf_newpkg\/agent\/0 .*\n/);
  expect(refused).toContain("requeued wf_newpkg/agent/0 run ag_newpkg: its folder packages/new does not exist in this worker's project; another worker may have it");
  having.child.kill("SIGCONT");
  const answer = await handle.getResult();
  expect(answer.worker).toBe("w2");
  expect(answer.result.outcome).toBe("succeeded");
  expect(await lacking.stdoutText(/[^]*/)).not.toMatch(/settled wf_newpkg|failed wf_newpkg/);
}, 120_000);

test("a child whose folder no live worker's checkout has fails as configuration_invalid, naming the folder and the workers that lack it", async () => {
  const databaseUrl = fleet.pg.urlFor("missing_everywhere");
  const worker = fleet.startWorker("w3", databaseUrl, ["--stub"]);
  await worker.stdoutText(/worker w3 ready/);
  const client = await DBOSClient.create({ systemDatabaseUrl: databaseUrl, applicationName: DBOS_APPLICATION });
  onTestFinished(() => client.destroy());
  const handle = await enqueueChild(client, childRequest("nowhere", { cwd: "packages/absent" }));
  const message =
    "The child's folder packages/absent does not exist in the project of any live flow worker (w3 lack it): check out the project where it has that folder on a worker, or give the worker a --cwd that has it.";
  expect((await handle.getResult()).result).toMatchObject({ outcome: "failed", error: { code: "configuration_invalid", message } });
  expect(await worker.stdoutText(/failed wf_nowhere\/agent\/0 .*\n/)).toContain(message);
}, 120_000);
