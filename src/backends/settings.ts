import { FlowError } from "../contract/errors.ts";

/** Where a workflow's children run: in this process (`local`, the default), or on `flow worker`s through DBOS on Postgres. */
export type BackendSettings = { kind: "local" } | { kind: "dbos"; databaseUrl: string };

/** The `flow` object of Pi's settings, as far as the backend reads it. */
export interface FlowBackendSettingsInput {
  backend?: unknown;
  databaseUrl?: unknown;
}

const SECTION = 'see docs/scale.md, "Settings"';

const invalid = (what: string) => new FlowError("configuration_invalid", `${what} (${SECTION}).`);

function databaseUrl(value: unknown, what: string): string | undefined {
  if (value === undefined || value === "") return undefined;
  if (typeof value !== "string") throw invalid(`${what} must be a postgres:// URL`);
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw invalid(`${what} is not a URL`);
  }
  if (parsed.protocol !== "postgres:" && parsed.protocol !== "postgresql:") throw invalid(`${what} must be a postgres:// URL, not ${parsed.protocol}`);
  if (parsed.pathname.length <= 1) throw invalid(`${what} must name a database (postgres://host:port/DATABASE)`);
  return value;
}

/**
 * `flow.backend` and `flow.databaseUrl` in Pi's settings win over PI_FLOW_BACKEND and
 * PI_FLOW_DATABASE_URL. Nothing set: local. `dbos` without a database URL, or an unknown backend,
 * is configuration_invalid before anything launches.
 */
export function resolveBackendSettings(flow: FlowBackendSettingsInput | undefined, env: Record<string, string | undefined>): BackendSettings {
  const raw = flow?.backend ?? (env.PI_FLOW_BACKEND === "" ? undefined : env.PI_FLOW_BACKEND);
  if (raw === undefined || raw === "local") return { kind: "local" };
  if (raw !== "dbos") throw invalid(`The backend ${JSON.stringify(raw)} is unknown: give local or dbos`);
  const url = databaseUrl(flow?.databaseUrl, "flow.databaseUrl") ?? databaseUrl(env.PI_FLOW_DATABASE_URL, "PI_FLOW_DATABASE_URL");
  if (url === undefined) throw invalid("The dbos backend needs a Postgres database: set PI_FLOW_DATABASE_URL or flow.databaseUrl");
  return { kind: "dbos", databaseUrl: url };
}
