/**
 * What a coordinator tells of a child a worker gave back: back on the queue, or already taken by
 * another worker between two of its looks (a takeover). A real coordinator on the tests' own
 * Postgres; the test moves the child's row as the workers would.
 */
import pg from "pg";
import { expect, onTestFinished, test } from "vitest";
import { setTimeout as sleep } from "node:timers/promises";
import { dbosCoordinator } from "../../src/backends/dbos-coordinator.ts";
import { childRequest, fleetFixture } from "../support/fleet.ts";

const fleet = fleetFixture();

test("a child taken over by another worker between two looks of its coordinator is told as given back by the first and then running on the second", async () => {
  const url = fleet.pg.urlFor("requeued_between_looks");
  const coordinator = dbosCoordinator(url);
  onTestFinished(() => coordinator.close());
  await coordinator.ready();
  const db = new pg.Client({ connectionString: url });
  db.on("error", () => undefined);
  await db.connect();
  onTestFinished(() => db.end());
  const told: string[] = [];
  let heard = () => {};
  const hear = (line: string) => {
    told.push(line);
    heard();
  };
  const until = async (count: number) => {
    while (told.length < count) await new Promise<void>((resolve) => (heard = resolve));
  };
  const stop = new AbortController();
  const running = coordinator.run(childRequest("moved"), stop.signal, (worker) => hear(`taken by ${worker}`), ({ why, brief }) => hear(`requeued: ${why} [${brief}]`));
  running.catch(() => undefined);
  const move = (status: string, worker: string) => db.query("UPDATE dbos.workflow_status SET status = $1, executor_id = $2 WHERE workflow_uuid = 'wf_moved/agent/0'", [status, worker]);
  while ((await move("PENDING", "w1")).rowCount === 0) await sleep(50); // enqueued, then w1 takes it
  await until(1);
  await move("PENDING", "w2"); // w1 went silent: a sweep put it back and w2 took it at once
  await until(3);
  expect(told).toEqual(["taken by w1", "requeued: worker w1 handed it back (it stopped, went silent, or did not record the child's end); another worker takes it [w1 handed it back]", "taken by w2"]);
  stop.abort();
  await expect(running).rejects.toThrow();
}, 60_000);
