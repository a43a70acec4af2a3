/**
 * The dbos backend on a database that takes the connection and never answers (a network split with
 * no reset, a stopped server process): a TCP listener of the test's own accepts every connection
 * and says nothing. `flow run`, `flow worker` and a Pi session end instead of hanging, and the
 * parent's abort frees a delegation that waits on it.
 */
import { createServer, type AddressInfo, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, expect, onTestFinished, test } from "vitest";
import type { RunView } from "../../src/contract/run-schema.ts";
import { CONNECT_TIMEOUT_MS, connectionOptions, connectTimeoutMs } from "../../src/backends/dbos-load.ts";
import { flow, flowSandbox, startFlow } from "../cli/support.ts";
import { startPiSession } from "../support/pi-session.ts";

const sandbox = flowSandbox();
const script = sandbox.file(
  "one.js",
  'export const apiVersion = 1;\nexport const meta = { name: "one" };\nconst run = await agent({ role: "explorer", description: "Look", prompt: "Look.", context: { mode: "none" } });\nreturn run.value;\n',
);

let server: Server;
const sockets: Socket[] = [];
/** Every connection the silent database took: a test waits for one to know its client is waiting. */
let accepted: () => void = () => undefined;
let silentUrl = "";
beforeAll(async () => {
  server = createServer((socket) => {
    sockets.push(socket);
    socket.on("error", () => undefined);
    accepted();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  // connect_timeout (libpq's, in seconds) bounds the wait for the first answer: the default 10 s, shortened.
  silentUrl = `postgres://flow:Secret-Pw-123@127.0.0.1:${(server.address() as AddressInfo).port}/pi_flow?connect_timeout=2`;
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => server.close(resolve));
  sandbox.dispose();
});
const nextConnection = () => new Promise<void>((resolve) => (accepted = resolve));
// Query parameters are masked like the password: a URL may carry one (`?password=`).
const shown = () => silentUrl.replace("Secret-Pw-123", "***").replace("connect_timeout=2", "connect_timeout=***");

// The two processes wait out the client's connect timeout side by side; the Pi session's test comes
// after them, alone, since it waits for its own connection to the silent database.
test.concurrent("flow run on a database that never answers ends configuration_invalid, launches nothing, and names no password", async ({ expect }) => {
  const ran = await flow(["run", script, "--stub"], { env: { ...sandbox.env, PI_FLOW_BACKEND: "dbos", PI_FLOW_DATABASE_URL: silentUrl } });
  expect(ran.code).toBe(2);
  expect(ran.stderr).toContain(`cannot use the database ${shown()}`);
  expect(ran.stderr).toMatch(/timeout.*\(configuration_invalid\)/);
  expect(ran.stderr).not.toContain("Secret-Pw-123");
  expect(ran.stderr).not.toMatch(/run wf_/);
  expect(ran.stdout).toBe("");
}, 120_000);

test.concurrent("flow worker on a database that never answers exits 2, configuration_invalid, without taking a child", async ({ expect }) => {
  const worker = startFlow(["worker", "--stub", "--name", "silent"], { env: { ...sandbox.env, PI_FLOW_DATABASE_URL: silentUrl } });
  const ended = await worker.done;
  expect(ended.code).toBe(2);
  expect(ended.stderr).toContain(`cannot use the database ${shown()}`);
  expect(ended.stderr).toContain("(configuration_invalid)");
  expect(ended.stdout).not.toContain("ready");
}, 120_000);

test("a delegation waiting on a database that never answers ends at the parent's abort, and the next one is refused configuration_invalid with no run recorded", async () => {
  const pi = await startPiSession({ env: { PI_FLOW_BACKEND: "dbos", PI_FLOW_DATABASE_URL: silentUrl } });
  onTestFinished(() => pi.dispose());
  const delegation = (description: string) => ({ role: "explorer", description, prompt: "Look.", context: { mode: "none" } });

  const connecting = nextConnection();
  const call = pi.callTool("external_delegate", delegation("Aborted part"));
  await connecting; // the coordinator is waiting on the silent database
  await pi.session.abort();
  const aborted = await call;
  expect(aborted.isError).toBe(true);
  expect(aborted.text).toMatch(/aborted/);

  const refused = await pi.callTool("external_delegate", delegation("Refused part"));
  expect(refused.isError).toBe(true);
  expect(refused.structuredContent).toMatchObject({ ok: false, error: { code: "configuration_invalid" } });
  expect(refused.text).toContain(shown());
  expect(refused.text).not.toContain("Secret-Pw-123");
  const runs = (await pi.callTool("external_runs", { action: "list" })).structuredContent as { data: { runs: RunView[] } };
  expect(runs.data.runs).toEqual([]);
}, 120_000);

test("a session that shuts down while its coordinator still waits on a database that never answers does not wait for it", async () => {
  // A coordinator of its own (the test above's session holds the other), whose connection waits up to 60 s.
  const url = silentUrl.replace(/\/pi_flow\?connect_timeout=2$/, "/pi_flow_shutdown?connect_timeout=60");
  expect(url).toMatch(/\/pi_flow_shutdown\?connect_timeout=60$/);
  const pi = await startPiSession({ env: { PI_FLOW_BACKEND: "dbos", PI_FLOW_DATABASE_URL: url } });
  onTestFinished(() => pi.dispose());
  const connecting = nextConnection();
  const call = pi.callTool("external_delegate", { role: "explorer", description: "Aborted part", prompt: "Look.", context: { mode: "none" } });
  await connecting;
  await pi.session.abort();
  await call;
  // The coordinator's connection still waits on the database, for up to a minute (its
  // connect_timeout; pg keeps the socket open after it gives up, so the socket cannot tell). A
  // shutdown that waited it out would take that minute; this one takes well under half of it,
  // a margin no busy machine eats.
  const shuttingDown = Date.now();
  await pi.shutdown();
  expect(Date.now() - shuttingDown).toBeLessThan(30_000);
}, 120_000);

test("a URL's connect_timeout (libpq's, in seconds) sets how long a connection waits; none, zero or nonsense keeps 10 s", () => {
  expect(connectionOptions("postgres://flow@db:5432/pi_flow?connect_timeout=3").connectionTimeoutMillis).toBe(3000);
  expect(connectTimeoutMs("postgres://flow@db/pi_flow?sslmode=require&connect_timeout=0.5")).toBe(500);
  expect(CONNECT_TIMEOUT_MS).toBe(10_000);
  for (const url of ["postgres://flow@db/pi_flow", "postgres://flow@db/pi_flow?connect_timeout=0", "postgres://flow@db/pi_flow?connect_timeout=-4", "postgres://flow@db/pi_flow?connect_timeout=soon", "not a url"]) {
    expect(connectTimeoutMs(url)).toBe(CONNECT_TIMEOUT_MS);
  }
});
