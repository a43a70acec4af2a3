/**
 * One pi-flow version per database at a time. DBOS runs a workflow only on a process of the
 * application version that enqueued it, so a coordinator of pi-flow B whose workers run pi-flow A
 * would wait forever, and a worker of B would never take A's children. pi-flow refuses that mix
 * before anything launches: a coordinator or worker whose database is in use by another version
 * (live workers, or children still queued or running) is configuration_invalid, saying what to do.
 * A database that only ever saw another version, now idle, is simply taken over: that is an upgrade.
 */
import type { Client } from "pg";
import { FlowError } from "../contract/errors.ts";
import { SILENT_AFTER_SECONDS } from "./heartbeats.ts";
import { CHILD_QUEUE } from "./names.ts";
import { printable, shownUrl } from "../runs/index.ts";

export interface OtherVersionUse {
  version: string;
  /** Workers of that version heard from within the heartbeat silence: the first SHOWN_WORKERS by name. */
  workers: string[];
  /** How many more workers of that version there are. */
  moreWorkers: number;
  /** Its children still waiting on the queue or running. */
  unfinished: number;
}

/**
 * What a refusal names of the rows it read, as the workers line does (workers-line.ts): anyone who
 * can write the tables chooses their names and versions, so the server cuts each to SHOWN_CHARS,
 * sends at most SHOWN_WORKERS workers of SHOWN_VERSIONS versions, and the text goes out as one line.
 */
const SHOWN_CHARS = 64;
const SHOWN_WORKERS = 20;
const SHOWN_VERSIONS = 5;
const shown = (text: string) => printable(text).replace(/\s+/g, " ").trim();

/** What other pi-flow versions are doing on this database now; empty when nothing. */
export async function otherVersionsInUse(db: Pick<Client, "query">, mine: string, dbosSchema = "dbos"): Promise<OtherVersionUse[]> {
  const { rows: workers } = await db.query<{ name: string; version: string; total: string }>(
    `SELECT name, version, total FROM (
       SELECT left(name, $3) AS name, left(version, $3) AS version, row_number() OVER (PARTITION BY left(version, $3) ORDER BY name) AS n,
         count(*) OVER (PARTITION BY left(version, $3)) AS total, dense_rank() OVER (ORDER BY left(version, $3)) AS v
       FROM pi_flow.workers WHERE version <> $1 AND seen_at >= now() - make_interval(secs => $2)
     ) w WHERE n <= $4 AND v <= $5 ORDER BY version, name`,
    [mine, SILENT_AFTER_SECONDS, SHOWN_CHARS, SHOWN_WORKERS, SHOWN_VERSIONS],
  );
  const { rows: children } = await db.query<{ version: string; count: string }>(
    `SELECT left(application_version, $3) AS version, count(*) AS count FROM "${dbosSchema}".workflow_status
       WHERE queue_name = $1 AND status IN ('ENQUEUED', 'PENDING') AND application_version <> $2 GROUP BY 1 ORDER BY 1 LIMIT $4`,
    [CHILD_QUEUE, mine, SHOWN_CHARS, SHOWN_VERSIONS],
  );
  const uses = new Map<string, OtherVersionUse>();
  const use = (version: string) => uses.get(version) ?? uses.set(version, { version: shown(version), workers: [], moreWorkers: 0, unfinished: 0 }).get(version)!;
  for (const row of workers) {
    const of = use(row.version);
    of.workers.push(shown(row.name));
    of.moreWorkers = Number(row.total) - of.workers.length;
  }
  for (const row of children) use(row.version).unfinished += Number(row.count);
  return [...uses.values()];
}

const describe = ({ version, workers, moreWorkers, unfinished }: OtherVersionUse): string => {
  const count = workers.length + moreWorkers;
  const more = moreWorkers > 0 ? ` and ${moreWorkers} more` : "";
  const parts = [
    ...(workers.length > 0 ? [`worker${count === 1 ? "" : "s"} ${workers.join(", ")}${more}`] : []),
    ...(unfinished > 0 ? [`${unfinished} unfinished ${unfinished === 1 ? "child" : "children"}`] : []),
  ];
  return `${version} (${parts.join(" and ")})`;
};

/** configuration_invalid when another pi-flow version uses the database: the mix would strand children. */
export function refuseMixedVersions(url: string, mine: string, uses: readonly OtherVersionUse[]): void {
  if (uses.length === 0) return;
  throw new FlowError(
    "configuration_invalid",
    `The database ${shownUrl(url)} is in use by ${uses.map(describe).join(", ")}; this is ${mine}, and a fleet runs one pi-flow version: ` +
      `a worker takes only the children of its own version. Run ${mine} on every machine (stop those workers and upgrade them), ` +
      `or let their runs finish (or cancel them) first, or give this version a database of its own (another database name in the URL). See docs/scale.md.`,
  );
}
