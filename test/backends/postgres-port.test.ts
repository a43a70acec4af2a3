/**
 * The test Postgres's start when its port is taken between being chosen and being bound (another
 * test file's cluster or any process can take it): the cluster starts on another port.
 */
import { createServer, type AddressInfo, type Server } from "node:net";
import pg from "pg";
import { expect, onTestFinished, test } from "vitest";
import { freePort, startPostgres } from "../support/postgres.ts";

async function holdPort(): Promise<Server> {
  const holder = createServer();
  await new Promise<void>((resolve, reject) => {
    holder.once("error", reject);
    holder.listen(0, "127.0.0.1", resolve);
  });
  return holder;
}

test("a cluster whose chosen port was taken before it bound starts on another port and takes connections", async () => {
  const holder = await holdPort();
  onTestFinished(() => new Promise<void>((resolve) => holder.close(() => resolve())));
  const taken = (holder.address() as AddressInfo).port;
  const chosen: number[] = [];
  // The first choice is the taken port, as if another process took it right after it was chosen.
  const choosePort = async () => {
    const port = chosen.length === 0 ? taken : await freePort();
    chosen.push(port);
    return port;
  };

  const cluster = await startPostgres({ choosePort });
  onTestFinished(() => cluster.stop());

  expect(chosen[0]).toBe(taken);
  expect(chosen).toHaveLength(2);
  expect(cluster.port).toBe(chosen[1]);
  const client = new pg.Client({ connectionString: cluster.urlFor("postgres") });
  await client.connect();
  onTestFinished(() => client.end());
  const { rows } = await client.query<{ answer: number }>("SELECT 1 AS answer");
  expect(rows).toEqual([{ answer: 1 }]);
});
