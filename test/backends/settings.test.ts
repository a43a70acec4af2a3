import { expect, test } from "vitest";
import { resolveBackendSettings } from "../../src/backends/settings.ts";
import * as first from "../../src/backends/index.ts";
import { FlowError } from "../../src/contract/errors.ts";

const refusal = (run: () => unknown): FlowError => {
  try {
    run();
  } catch (error) {
    if (error instanceof FlowError) return error;
    throw error;
  }
  throw new Error("expected a refusal");
};

test("nothing set is the local backend; Pi's flow settings win over the environment", () => {
  expect(resolveBackendSettings(undefined, {})).toEqual({ kind: "local" });
  expect(resolveBackendSettings(undefined, { PI_FLOW_BACKEND: "" })).toEqual({ kind: "local" });
  const env = { PI_FLOW_BACKEND: "dbos", PI_FLOW_DATABASE_URL: "postgres://env-host/flow" };
  expect(resolveBackendSettings(undefined, env)).toEqual({ kind: "dbos", databaseUrl: "postgres://env-host/flow" });
  expect(resolveBackendSettings({ databaseUrl: "postgresql://settings-host:5433/flow" }, env)).toEqual({ kind: "dbos", databaseUrl: "postgresql://settings-host:5433/flow" });
  expect(resolveBackendSettings({ backend: "local" }, env)).toEqual({ kind: "local" });
});

test("an unknown backend, dbos without a database, or a URL that is not Postgres's is configuration_invalid", () => {
  expect(refusal(() => resolveBackendSettings({ backend: "temporal" }, {}))).toMatchObject({ code: "configuration_invalid", message: expect.stringContaining('"temporal" is unknown') });
  expect(refusal(() => resolveBackendSettings(undefined, { PI_FLOW_BACKEND: "dbos" })).message).toMatch(/needs a Postgres database: set PI_FLOW_DATABASE_URL or flow.databaseUrl/);
  expect(refusal(() => resolveBackendSettings({ backend: "dbos", databaseUrl: "mysql://host/db" }, {})).message).toMatch(/flow.databaseUrl must be a postgres:\/\/ URL, not mysql:/);
  expect(refusal(() => resolveBackendSettings({ backend: "dbos" }, { PI_FLOW_DATABASE_URL: "postgres://host:5432" })).message).toMatch(/must name a database/);
  expect(refusal(() => resolveBackendSettings({ backend: "dbos", databaseUrl: 5432 }, {})).code).toBe("configuration_invalid");
});

test("a reloaded copy of pi-flow uses the coordinator an earlier copy opened for the database, and closing its sessions closes it", async () => {
  const second = (await import(new URL("../../src/backends/index.ts?reloaded", import.meta.url).href)) as typeof first;
  expect(second).not.toBe(first);
  const settings = { kind: "dbos", databaseUrl: "postgres://127.0.0.1:1/flow_reload" } as const; // never connected: nothing here runs
  const opened = first.fleetFor(settings, "session-before-reload");
  expect(second.fleetFor(settings, "session-after-reload")).toBe(opened);
  await second.releaseFleets("session-before-reload");
  expect(first.fleetFor(settings, "another")).toBe(opened); // still held by the session after the reload
  await second.releaseFleets("session-after-reload");
  await first.releaseFleets("another");
  const reopened = second.fleetFor(settings, "later");
  expect(reopened).not.toBe(opened); // the first was closed and dropped, by whichever copy
  await first.closeFleets();
  expect(second.fleetFor(settings, "later")).not.toBe(reopened);
  await second.closeFleets();
});
