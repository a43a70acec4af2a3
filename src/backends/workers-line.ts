import { workersSeen } from "./heartbeats.ts";
import type { BackendSettings } from "./settings.ts";
import { printable, shownUrl } from "../runs/index.ts";

/** Text from the database as one safe line (ui/format.ts's oneLine, which this floor cannot import): anyone who can write there chose it. */
const shown = (text: string) => printable(text).replace(/\s+/g, " ").trim();

/** How long `flow help` and `/flow doctor` wait for the database before saying it did not answer. */
const CONNECT_TIMEOUT_MS = 3000;

/**
 * The workers the dbos backend's database has heard from, one line: name, when last seen, how many
 * children at once. Undefined on the local backend. Never throws: a database that cannot be read is
 * said in the line.
 */
export async function workersLine(settings: BackendSettings): Promise<string | undefined> {
  if (settings.kind === "local") return undefined;
  let pg: typeof import("pg").default;
  try {
    pg = (await import("pg")).default;
  } catch {
    return "unknown: the optional dependency pg is not installed";
  }
  const client = new pg.Client({ connectionString: settings.databaseUrl, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, query_timeout: CONNECT_TIMEOUT_MS });
  client.on("error", () => undefined);
  try {
    await client.connect();
    const { rows, total } = await workersSeen(client);
    if (rows.length === 0) return "none seen yet: start one with flow worker (docs/scale.md)";
    const more = total > rows.length ? `, and ${total - rows.length} more` : "";
    return rows.map((row) => `${shown(row.name)} (seen ${Math.round(row.secondsSinceSeen)}s ago, up to ${row.concurrency} children, ${shown(row.version)})`).join(", ") + more;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // No table yet: no pi-flow process has used this database.
    if (/relation .* does not exist/.test(message)) return "none seen yet: start one with flow worker (docs/scale.md)";
    return `unknown: the database ${shownUrl(settings.databaseUrl)} did not answer (${shown(message.replaceAll(settings.databaseUrl, shownUrl(settings.databaseUrl)))})`;
  } finally {
    await client.end().catch(() => undefined);
  }
}
