import { FlowError } from "../contract/errors.ts";
import { errorCode } from "../runs/index.ts";
import { otherVersionsInUse, refuseMixedVersions } from "./fleet-version.ts";
import { ensureWorkersTable } from "./heartbeats.ts";
import { ensureRefusalsTable } from "./folder-refusals.ts";
import { ensureCoordinatorsTable } from "./coordinator-claims.ts";
import { ensureSteersTable } from "./steers.ts";
import { ensureChildSessionsTable } from "./child-sessions.ts";
import { applicationVersion } from "./names.ts";
import { shownUrl } from "../runs/index.ts";

/** The DBOS SDK, loaded only when the dbos backend is chosen: the local default never pays for it. */
export type DbosSdk = typeof import("@dbos-inc/dbos-sdk");

export async function loadDbos(): Promise<DbosSdk> {
  try {
    return await import("@dbos-inc/dbos-sdk");
  } catch (error) {
    throw new FlowError(
      "configuration_invalid",
      `The dbos backend needs the optional dependency @dbos-inc/dbos-sdk, which is not installed (${(error as Error).message}); npm install @dbos-inc/dbos-sdk, or use the local backend.`,
    );
  }
}

/**
 * How long pi-flow waits for Postgres to accept a connection (the server's first answer included),
 * and for the answer to any one query: a database that takes the connection and never answers
 * (a network split with no reset, a stopped process) fails within them instead of hanging. The
 * query's bound is also the server's `statement_timeout`: a statement the server holds (a lock
 * another session keeps) is cancelled there, and its connection stays usable.
 */
export const CONNECT_TIMEOUT_MS = 10_000;
export const QUERY_TIMEOUT_MS = 30_000;

/**
 * How long a connection to `url` may wait for the server: the URL's `connect_timeout` (seconds, as
 * libpq and psql read it; node-postgres ignores it) when it names a positive number, else
 * CONNECT_TIMEOUT_MS. A URL that cannot be parsed keeps the default; opening it says why.
 */
export function connectTimeoutMs(url: string): number {
  let named: string | null = null;
  try {
    named = new URL(url).searchParams.get("connect_timeout");
  } catch {
    return CONNECT_TIMEOUT_MS;
  }
  const seconds = named === null ? Number.NaN : Number(named);
  return Number.isFinite(seconds) && seconds > 0 ? Math.ceil(seconds * 1000) : CONNECT_TIMEOUT_MS;
}

/** What every pg Client and Pool of the dbos backend is made with: its URL, and the bounds above (a `statement_timeout` or `connect_timeout` the URL names wins). */
export function connectionOptions(connectionString: string): { connectionString: string; connectionTimeoutMillis: number; query_timeout: number; statement_timeout: number } {
  return { connectionString, connectionTimeoutMillis: connectTimeoutMs(connectionString), query_timeout: QUERY_TIMEOUT_MS, statement_timeout: QUERY_TIMEOUT_MS };
}

/** How long a session of DBOS's may sit idle inside a transaction: DBOS's own default, set at connect instead of by DBOS. */
const IDLE_TRANSACTION_MS = 60_000;

/**
 * The URL DBOS opens its own connections with (its pool, its migration, a client's): DBOS takes no
 * pg options but reads the URL's parameters, so the server's statement_timeout goes there, unless
 * the URL names one; and, unless the URL has `options` of its own, its idle-in-transaction bound,
 * which DBOS would otherwise SET on each new connection of its pool, a query pg queues behind the
 * connection's first (deprecated: "Calling client.query() when the client is already executing a
 * query", an error in pg 9). The database's URL stays a prefix of it, so unusableDatabase masks it alike.
 */
export function dbosUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.hash !== "") return url; // a fragment: no place to add it after
  const added: string[] = [];
  if (!parsed.searchParams.has("statement_timeout")) added.push(`statement_timeout=${QUERY_TIMEOUT_MS}`);
  if (!parsed.searchParams.has("options")) added.push(`options=${encodeURIComponent(`-c idle_in_transaction_session_timeout=${IDLE_TRANSACTION_MS}`)}`);
  if (added.length === 0) return url;
  return `${url}${parsed.search === "" ? "?" : "&"}${added.join("&")}`;
}

/** The server cancelled a statement past its statement_timeout (SQLSTATE 57014), anywhere in `error`'s causes. */
export function statementTimedOut(error: unknown): boolean {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 8; cause = cause.cause, depth++) {
    if (errorCode(cause) === "57014") return true;
  }
  return false;
}

/** Why a database could not be used, in words that quote no password. */
export function unusableDatabase(url: string, error: unknown): FlowError {
  const reason = error instanceof Error ? error.message : String(error);
  return new FlowError("configuration_invalid", `The dbos backend cannot use the database ${shownUrl(url)}: ${reason.replaceAll(url, shownUrl(url))} (see docs/scale.md).`);
}

const MIGRATION_ATTEMPTS = 5;
/** What two processes migrating a fresh database at once may see; anything else is not worth a second try. */
const MIGRATION_RACE = /concurrently updated|duplicate key|already exists|deadlock/i;

/** A DBOS logger that says nothing: pi-flow reports what matters itself, and stdout is the run's value. */
export const QUIET_LOGGER = { info: () => undefined, debug: () => undefined, warn: () => undefined, error: () => undefined };

/**
 * Runs `work` with the console silenced: DBOS's migration logs through it with no way to pass a
 * logger, and `flow run` prints its value on stdout. What was said is returned for an error.
 */
async function quietly<T>(work: () => Promise<T>): Promise<T> {
  const saved = { log: console.log, info: console.info, warn: console.warn, error: console.error, debug: console.debug };
  const mute = () => undefined;
  Object.assign(console, { log: mute, info: mute, warn: mute, error: mute, debug: mute });
  try {
    return await work();
  } finally {
    Object.assign(console, saved);
  }
}

/** The advisory lock every pi-flow process takes to migrate: "pi-flow" in ASCII. */
const MIGRATION_LOCK = 0x70692d666c6f77;

/**
 * Creates or migrates DBOS's schema (and the database itself), then refuses a database another
 * pi-flow version is using (fleet-version.ts). Two processes migrating a fresh
 * database at once race ("tuple concurrently updated", a duplicate key): so each holds a Postgres
 * advisory lock, taken in the server's maintenance database (the system database may not exist
 * yet), while it migrates; the second then finds the work done. Without access to that database
 * the migration is tried again on a race instead. An unreachable or refusing server fails at once.
 */
export async function migrate(sdk: DbosSdk, url: string): Promise<void> {
  const { default: pg } = await import("pg");
  const maintenance = new URL(url);
  maintenance.pathname = "/postgres";
  const lock = new pg.Client(connectionOptions(maintenance.toString()));
  lock.on("error", () => undefined); // a server going away mid-lock is the migration's error to report
  let locked = false;
  try {
    await lock.connect();
    await lock.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK]);
    locked = true;
  } catch (error) {
    const code = errorCode(error);
    // Refused outright, or not answering: say so now. A role without the maintenance database migrates unlocked.
    const silent = /timeout/i.test(error instanceof Error ? error.message : String(error));
    if (silent || (code !== undefined && /^(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|28P01|28000)$/.test(code))) {
      await lock.end().catch(() => undefined);
      throw unusableDatabase(url, error);
    }
  }
  try {
    await migrateRetryingRaces(sdk, url);
    const system = new pg.Client(connectionOptions(url));
    system.on("error", () => undefined);
    let uses;
    try {
      await system.connect();
      await ensureWorkersTable(system);
      await ensureSteersTable(system);
      await ensureChildSessionsTable(system);
      await ensureRefusalsTable(system);
      await ensureCoordinatorsTable(system);
      uses = await otherVersionsInUse(system, applicationVersion());
    } catch (error) {
      throw unusableDatabase(url, error);
    } finally {
      await system.end().catch(() => undefined);
    }
    refuseMixedVersions(url, applicationVersion(), uses);
  } finally {
    if (locked) await lock.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK]).catch(() => undefined);
    await lock.end().catch(() => undefined);
  }
}

async function migrateRetryingRaces(sdk: DbosSdk, url: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await quietly(() => sdk.DBOS.migrate(dbosUrl(url)));
      return;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (!MIGRATION_RACE.test(message) || attempt >= MIGRATION_ATTEMPTS) throw unusableDatabase(url, error);
      await new Promise((resolve) => setTimeout(resolve, 100 * attempt + Math.floor(Math.random() * 200)));
    }
  }
}

/** Why a child failed when the database held one of its worker's queries past the statement_timeout. */
export function stalledMessage(worker: string, workflowId: string): string {
  return (
    `The database did not answer worker ${worker} for child ${workflowId} within its statement_timeout ` +
    `(${QUERY_TIMEOUT_MS / 1000} s unless the database URL sets one): a lock another session holds, or a stalled server; the child failed and its answer, if any, was not recorded.`
  );
}
