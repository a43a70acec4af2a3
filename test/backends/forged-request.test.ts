/**
 * A child request whose input names another workflow than its own, as anyone who can write to the
 * fleet's database may enqueue: the worker refuses it before anything runs, so it can neither take
 * the other child's saved session and unread steers nor write into them. A real `flow worker` on a
 * faux model (test/fixtures/fleet/steer-model.ts) and the tests' own Postgres; the victim's rows
 * are written straight into the database, as its worker would have left them. Also here, with the
 * same worker fixture: a worker stopped mid-child stops it and hands it back with what it saved,
 * with every child the database says it holds.
 */
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { DBOSClient } from "@dbos-inc/dbos-sdk";
import pg from "pg";
import { expect, onTestFinished, test } from "vitest";
import { CHILD_QUEUE, CHILD_WORKFLOW, DBOS_APPLICATION } from "../../src/backends/names.ts";
import { dbosCoordinator } from "../../src/backends/dbos-coordinator.ts";
import type { RemoteChildRequest } from "../../src/backends/remote-child.ts";
import { PROJECT_ROOT, type RunningFlow } from "../cli/support.ts";
import { childRequest, enqueueChild, fleetFixture, installShutdownMarker, WORKER_PROFILE } from "../support/fleet.ts";
import { sendSteer } from "../../src/backends/steers.ts";

const fleet = fleetFixture();
const STEER_MODEL = join(PROJECT_ROOT, "test", "fixtures", "fleet", "steer-model.ts");
const VICTIM = "wf_victim/agent/0";

const request = (workflowId: string): RemoteChildRequest =>
  childRequest("forged", { workflowId, profile: WORKER_PROFILE, task: { agent: "role:worker", description: "Forged part" }, prompt: "Do the part." });

/** The worker the first test starts and the second stops (a start costs seconds), and the file its children's bash waits on. */
const shared: { worker?: RunningFlow; release: string } = { release: "" };

test("a request whose input names another child's workflow is refused before it runs, and that child's steers and session stay its own", async () => {
  const databaseUrl = fleet.pg.urlFor("forged_request");
  const release = (shared.release = join(fleet.sandbox.root, "release"));
  writeFileSync(release, ""); // the faux child's bash call returns at once
  const args = ["worker", "--name", "w1", "--cwd", fleet.project, "--model", "faux/faux-1", "--extension", STEER_MODEL];
  const worker = fleet.start(args, { PI_FLOW_DATABASE_URL: databaseUrl, FLOW_STEER_RELEASE: release });
  await worker.stdoutText(/worker w1 ready/);

  // The victim child's worker had handed it a steer no turn had read yet (a takeover hands it over again).
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  onTestFinished(() => db.end());
  await db.query("INSERT INTO pi_flow.child_session_steers (workflow_id, messages) VALUES ($1, $2)", [VICTIM, JSON.stringify(["the victim's private steer"])]);

  const client = await DBOSClient.create({ systemDatabaseUrl: databaseUrl, applicationName: DBOS_APPLICATION });
  onTestFinished(() => client.destroy());
  const enqueue = (workflowID: string, child: RemoteChildRequest) => enqueueChild(client, child, workflowID);

  const forged = await enqueue("wf_forged/agent/0", request(VICTIM));
  await expect(forged.getResult()).rejects.toThrow(`The workflow wf_forged/agent/0 names another child, ${VICTIM}, in its input: refused, nothing run.`);
  expect(await worker.stdoutText(/failed wf_forged\/agent\/0 .*\n/)).toContain(`failed wf_forged/agent/0 run ag_forged: The workflow wf_forged/agent/0 names another child, ${VICTIM}`);
  expect((await db.query("SELECT messages FROM pi_flow.child_session_steers WHERE workflow_id = $1", [VICTIM])).rows).toEqual([{ messages: JSON.stringify(["the victim's private steer"]) }]);
  expect((await db.query("SELECT count(*)::int AS n FROM pi_flow.child_sessions WHERE workflow_id = $1", [VICTIM])).rows).toEqual([{ n: 0 }]);

  // A request whose input names its own workflow runs as always, and hears no other child's steer.
  const honest = await enqueue("wf_honest/agent/0", request("wf_honest/agent/0"));
  expect((await honest.getResult()).result).toMatchObject({ outcome: "succeeded", value: "heard nothing" });
  expect(await worker.stdoutText(/[^]*/)).not.toMatch(/started wf_forged|started wf_victim/);
  shared.worker = worker; // the next test stops it
}, 180_000);

test("a delegation whose coordinator is gone (its claim silent past 120 s: the Pi process killed) is cancelled by a worker's sweep and stopped there; a workflow's child of such a run (a resume takes it on) and a delegation whose coordinator beats run on", async () => {
  const databaseUrl = fleet.pg.urlFor("forged_request");
  const { worker, release } = shared;
  if (!worker) throw new Error("the test above starts the worker; it did not get that far");
  rmSync(release); // the children wait in bash until the end
  onTestFinished(() => writeFileSync(release, ""));
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  onTestFinished(() => db.end());
  // The claims coordinators left: two of a process killed 10 minutes ago (a sweep deletes claims only after 15), one beating (seen in the future: however slow this machine).
  await db.query(
    `INSERT INTO pi_flow.coordinators (root, instance, host, pid, seen_at) VALUES
     ('wf_orphan', 'dead', 'gone-host', 1, now() - interval '10 minutes'), ('wf_resumable', 'dead', 'gone-host', 1, now() - interval '10 minutes'), ('wf_live', 'live', 'host', 1, now() + interval '1 hour')`,
  );
  const client = await DBOSClient.create({ systemDatabaseUrl: databaseUrl, applicationName: DBOS_APPLICATION });
  onTestFinished(() => client.destroy());
  const ids = ["wf_resumable/agent/0", "wf_live/delegate", "wf_orphan/delegate"];
  for (const id of ids) await enqueueChild(client, request(id));
  for (const id of ids) await worker.stdoutText(new RegExp(`started ${id}`));
  // Enqueued "just now": the delegation's age counts too, so its claim's row is aged past the bound with it.
  await db.query("UPDATE dbos.workflow_status SET created_at = created_at - 3600000 WHERE workflow_uuid = ANY($1)", [ids]);
  await worker.stdoutText(/cancelled wf_orphan\/delegate: the coordinator of each delegation has not been heard from in 120 s/);
  await worker.stdoutText(/settled wf_orphan\/delegate run ag_forged cancelled/);
  const statuses = async () => (await db.query("SELECT workflow_uuid, status FROM dbos.workflow_status WHERE workflow_uuid = ANY($1) ORDER BY workflow_uuid", [ids])).rows;
  expect(await statuses()).toEqual([
    { workflow_uuid: "wf_live/delegate", status: "PENDING" },
    { workflow_uuid: "wf_orphan/delegate", status: "CANCELLED" },
    { workflow_uuid: "wf_resumable/agent/0", status: "PENDING" },
  ]);
  writeFileSync(release, "");
  while ((await statuses()).some((row) => row.status === "PENDING")) await sleep(100);
  expect((await statuses()).map((row) => row.status)).toEqual(["SUCCESS", "CANCELLED", "SUCCESS"]);
}, 180_000);

/** Whether a process whose command line holds `text` runs (a child's bash, found by the file it waits on). */
function commandRunning(text: string): boolean {
  return readdirSync("/proc").some((pid) => {
    try {
      return /^\d+$/.test(pid) && readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(text);
    } catch {
      return false; // ended meanwhile
    }
  });
}

/** The most memory the process has held at once (its peak resident set), in bytes. */
const peakMemory = (pid: number): number => Number(/^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? Number.NaN) * 1024;

test("a running child whose input row is forged huge is cancelled without its worker reading that row again", async () => {
  const databaseUrl = fleet.pg.urlFor("forged_request");
  const { worker, release } = shared;
  if (!worker) throw new Error("the test above starts the worker; it did not get that far");
  shared.worker = undefined;
  rmSync(release); // not there again before the cancel: the child waits in bash
  onTestFinished(() => writeFileSync(release, ""));
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  onTestFinished(() => db.end());
  const client = await DBOSClient.create({ systemDatabaseUrl: databaseUrl, applicationName: DBOS_APPLICATION });
  onTestFinished(() => client.destroy());
  const id = "wf_hugeinput/agent/0";
  await enqueueChild(client, request(id));
  await worker.stdoutText(/started wf_hugeinput\/agent\/0/);
  // Whoever can write to the database swells the running child's input row (made by the server,
  // stored compressed): the worker read it once, as it took the child; its watch for cancels
  // needs only the status, and one that read the row every half second would hold it whole.
  const before = peakMemory(worker.child.pid!);
  const huge = 64 * 1024 * 1024;
  await db.query("UPDATE dbos.workflow_input SET inputs = repeat('x', $2) WHERE workflow_uuid = $1", [id, huge]);
  await client.cancelWorkflow(id);
  await worker.stdoutText(/settled wf_hugeinput\/agent\/0 run ag_forged cancelled/);
  expect(peakMemory(worker.child.pid!) - before).toBeLessThan(huge / 2);
  worker.child.kill("SIGTERM");
  const stopped = await worker.done;
  expect(stopped.code).toBe(0);
  expect(stopped.stdout).toContain("worker w1 stopped (SIGTERM)");
}, 120_000);

test("a worker stopped with SIGTERM mid-child stops the child (its extensions hear session_shutdown) and hands it back unsettled, its saved session and the steer it was handed kept for the next worker", async () => {
  const databaseUrl = fleet.pg.urlFor("forged_request");
  const release = join(fleet.sandbox.root, "stop-release"); // not written until the end: the child waits in bash
  const marker = join(fleet.sandbox.root, "shutdown-marker");
  installShutdownMarker(fleet.sandbox); // notes the end of a session that holds a prompt (a child's)
  const args = ["worker", "--name", "w2", "--cwd", fleet.project, "--model", "faux/faux-1", "--extension", STEER_MODEL];
  const worker = fleet.start(args, { PI_FLOW_DATABASE_URL: databaseUrl, FLOW_STEER_RELEASE: release, FLOW_SHUTDOWN_MARKER: marker });
  onTestFinished(() => writeFileSync(release, "")); // nothing of the child waits on after the test
  await worker.stdoutText(/worker w2 ready/);
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  onTestFinished(() => db.end());
  const client = await DBOSClient.create({ systemDatabaseUrl: databaseUrl, applicationName: DBOS_APPLICATION });
  onTestFinished(() => client.destroy());
  const id = "wf_stopped/agent/0";
  await enqueueChild(client, request(id));
  await worker.stdoutText(/started wf_stopped\/agent\/0/);
  // Handed to the child in its tool call (a steer sent before its first model request would be read by it): saved beside its session, unread.
  while (!commandRunning(release)) await sleep(50);
  await sendSteer(db, id, "Also check the README.");
  await worker.stdoutText(/steered wf_stopped\/agent\/0/);
  const savedSteers = async () => (await db.query<{ messages: string }>("SELECT messages FROM pi_flow.child_session_steers WHERE workflow_id = $1", [id])).rows;
  while ((await savedSteers()).length === 0) await sleep(50);

  // A child DBOS took off the queue for this worker as it was told to stop, whose run never started here.
  const dequeued = "wf_dequeued/agent/0";
  await db.query("INSERT INTO dbos.workflow_status (workflow_uuid, status, name, queue_name, executor_id) VALUES ($1, 'PENDING', $2, $3, 'w2')", [dequeued, CHILD_WORKFLOW, CHILD_QUEUE]);

  worker.child.kill("SIGTERM");
  const stopped = await worker.done;
  expect(stopped.code).toBe(0);
  expect(stopped.stdout).toContain("worker w2 stopped (SIGTERM): 1 unfinished child handed back to the queue");
  expect((await db.query("SELECT status FROM dbos.workflow_status WHERE workflow_uuid = $1", [dequeued])).rows).toEqual([{ status: "ENQUEUED" }]);
  expect(stopped.stdout).not.toContain("settled wf_stopped");
  expect(readFileSync(marker, "utf8")).toBe("child session shut down\n");
  // Back on the queue, not cancelled; what the next worker continues from is all there, once.
  expect((await db.query("SELECT status FROM dbos.workflow_status WHERE workflow_uuid = $1", [id])).rows).toEqual([{ status: "ENQUEUED" }]);
  // The turn the stop cut off is not saved (a tool result "Command aborted" would keep the next worker from running the tool again).
  const saved = (await db.query<{ entry: string }>("SELECT entry FROM pi_flow.child_sessions WHERE workflow_id = $1 ORDER BY seq", [id])).rows.map((row) => row.entry).join("\n");
  expect(saved).toContain("Do the part.");
  expect(saved).not.toMatch(/Command aborted|"stopReason":"aborted"|Also check the README/);
  expect(await savedSteers()).toEqual([{ messages: JSON.stringify(["Also check the README."]) }]);
  expect((await db.query("SELECT count(*)::int AS n FROM pi_flow.steers WHERE workflow_id = $1", [id])).rows).toEqual([{ n: 0 }]);
}, 180_000);

test("a settled child's answer row forged over the coordinator's limit (64 MiB) is not read: the child fails naming the limit, and the row stays as written", async () => {
  const databaseUrl = fleet.pg.urlFor("forged_request");
  const limit = 1024 * 1024; // a smaller limit than 64 MiB: the server need not write as much
  const coordinator = dbosCoordinator(databaseUrl, { maxAnswerBytes: limit });
  onTestFinished(() => coordinator.close());
  await coordinator.ready(); // the database is made and migrated
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  onTestFinished(() => db.end());
  const id = "wf_huge/agent/0";
  const running = coordinator.run(childRequest("huge"), new AbortController().signal, () => undefined);
  running.catch(() => undefined); // awaited below, once the row is forged
  // No worker runs: whoever can write to the database settles the child with an answer of its own, made by the server.
  while ((await db.query("SELECT 1 FROM dbos.workflow_status WHERE workflow_uuid = $1", [id])).rowCount === 0) await sleep(20);
  await db.query("UPDATE dbos.workflow_status SET status = 'SUCCESS', output = repeat('x', $2) WHERE workflow_uuid = $1", [id, limit + 1]);
  await expect(running).rejects.toMatchObject({
    code: "failed",
    message: `The worker's answer for ${id} is ${limit + 1} bytes, over the ${limit} bytes a coordinator reads: not read. Its row stays in the database's dbos.workflow_status, as it was written, for whoever looks into it.`,
  });
  const { rows } = await db.query("SELECT status, octet_length(output)::int AS bytes FROM dbos.workflow_status WHERE workflow_uuid = $1", [id]);
  expect(rows).toEqual([{ status: "SUCCESS", bytes: limit + 1 }]);
}, 120_000);
