/**
 * pi_flow.steers on the tests' own Postgres: a steer a worker took but could not hand to its child
 * goes back in its old place, for the child's coordinator to report as not delivered; one no
 * coordinator came for goes with the settled child's other rows at the sweep.
 */
import pg from "pg";
import { expect, test } from "vitest";
import { setTimeout as sleep } from "node:timers/promises";
import { dbosCoordinator } from "../../src/backends/dbos-coordinator.ts";
import { childRequest, fleetFixture } from "../support/fleet.ts";
import { deleteSettledSessions } from "../../src/backends/child-sessions.ts";
import { loadDbos, migrate } from "../../src/backends/dbos-load.ts";
import { returnSteers, sendSteer, takeSteers } from "../../src/backends/steers.ts";

const fleet = fleetFixture();

test("steers a worker could not hand over go back in order, for the coordinator to take; the sweep deletes those of a child settled long ago", async () => {
  const url = fleet.pg.urlFor("fleet_steers");
  await migrate(await loadDbos(), url);
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  try {
    for (const message of ["first", "second"]) await sendSteer(pool, "wf_1/agent/0", message);
    const taken = await takeSteers(pool, ["wf_1/agent/0"]);
    expect(taken.map((steer) => steer.message)).toEqual(["first", "second"]);
    await sendSteer(pool, "wf_1/agent/0", "third"); // sent while the worker held the first two
    // The child had ended: the worker puts back what it took, and one it held, unnumbered, last.
    await returnSteers(pool, [...taken, { seq: null, workflowId: "wf_1/agent/0", message: "held" }]);
    expect((await takeSteers(pool, ["wf_1/agent/0"])).map((steer) => steer.message)).toEqual(["first", "second", "third", "held"]);

    const now = "(EXTRACT(EPOCH FROM now()) * 1000)::bigint";
    await pool.query(`INSERT INTO dbos.workflow_status (workflow_uuid, status, updated_at) VALUES ('wf_long/agent/0', 'SUCCESS', ${now} - 1200000), ('wf_busy/agent/0', 'PENDING', ${now})`);
    await sendSteer(pool, "wf_long/agent/0", "nobody came");
    await sendSteer(pool, "wf_busy/agent/0", "still wanted");
    await deleteSettledSessions(pool);
    expect((await pool.query("SELECT workflow_id, message FROM pi_flow.steers")).rows).toEqual([{ workflow_id: "wf_busy/agent/0", message: "still wanted" }]);
  } finally {
    await pool.end();
  }
}, 120_000);

test("a child whose workflow row is deleted while its coordinator waits fails saying so, instead of waiting forever", async () => {
  const url = fleet.pg.urlFor("fleet_deleted");
  const coordinator = dbosCoordinator(url);
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  try {
    // No worker runs: the child waits on the queue until someone deletes its row.
    const running = coordinator.run(childRequest("deleted"), new AbortController().signal, () => undefined);
    running.catch(() => undefined);
    const status = async () => (await pool.query<{ status: string }>("SELECT status FROM dbos.workflow_status WHERE workflow_uuid = 'wf_deleted/agent/0'").catch(() => ({ rows: [] }))).rows[0]?.status;
    while ((await status()) !== "ENQUEUED") await sleep(50);
    await pool.query("DELETE FROM dbos.workflow_status WHERE workflow_uuid = 'wf_deleted/agent/0'");
    await expect(running).rejects.toThrow("The child's workflow wf_deleted/agent/0 is no longer in the database (its row was deleted before it ended)");
  } finally {
    await pool.end();
    await coordinator.close();
  }
}, 120_000);
