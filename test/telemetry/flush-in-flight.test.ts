import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { setImmediate as nextTurn } from "node:timers/promises";
import { afterAll, expect, test, vi } from "vitest";

// `flow run` and `flow worker` flush their spans and exit. The SDK's flush sends only the spans
// still queued: spans a scheduled export (or a flush started elsewhere, as a session's shutdown
// starts one) already took are in flight, and a flush that did not wait for them let the process
// exit and drop them. A collector here holds every answer until the test lets it go.
const held: { names: string[]; response: ServerResponse }[] = [];
const heldOne: (() => void)[] = [];
const nextHeld = () => new Promise<void>((resolve) => (held.length > 0 ? resolve() : heldOne.push(resolve)));
const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on("data", (chunk: Buffer) => chunks.push(chunk));
  request.on("end", () => {
    const names = [...Buffer.concat(chunks).toString("utf8").matchAll(/"name":"(span [^"]*)"/g)].map((match) => match[1]!);
    held.push({ names, response });
    for (const waiter of heldOne.splice(0)) waiter();
  });
});
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
afterAll(() => {
  server.closeAllConnections();
  server.close();
  vi.unstubAllEnvs();
});

/** Answers the export the collector holds, and says which spans it carried. */
function answer(): string[] {
  const { names, response } = held.shift()!;
  response.writeHead(200, { "content-type": "application/json" });
  response.end("{}");
  return names;
}

/** Whether `promise` is still pending after a turn of the event loop: an export to this collector takes longer than that. */
async function stillPending(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await nextTurn();
  await nextTurn();
  return !settled;
}

vi.stubEnv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`);
vi.stubEnv("OTEL_EXPORTER_OTLP_TIMEOUT", "120000"); // no deadline passes while the test holds an answer
const { loadTracing } = await import("../../src/telemetry/provider.ts");

test("a flush waits for the spans a scheduled export is still sending, so a process that exits after it loses none", async () => {
  const tracing = await loadTracing("http/json", "test", () => undefined);
  tracing.tracer.startSpan("span taken by the schedule").end();
  await nextHeld(); // the processor's scheduled export (5 s after the span) took it, and the collector holds its answer

  const flushed = tracing.flush();
  expect(await stillPending(flushed)).toBe(true);
  expect(answer()).toEqual(["span taken by the schedule"]);
  await flushed;
});

test("a flush waits for the spans another flush is sending (a session's shutdown flushes too)", async () => {
  const tracing = await loadTracing("http/json", "test", () => undefined);
  tracing.tracer.startSpan("span taken by the first flush").end();
  const first = tracing.flush();
  await nextHeld();

  const second = tracing.flush();
  expect(await stillPending(second)).toBe(true);
  expect(answer()).toEqual(["span taken by the first flush"]);
  await Promise.all([first, second]);
});
