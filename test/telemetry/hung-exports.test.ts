import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, expect, test, vi } from "vitest";

// A long Pi session or `flow worker` exports spans for hours. A collector that takes the spans,
// answers 200 and never finishes its answer must cost each export its timeout, and nothing after:
// the connection closed, its buffers let go, and the exports after it sent as before.
const hung = new Set<ServerResponse>();
let recovered = false;
const emptied: (() => void)[] = [];
/** Resolves once no hung answer is still open: the client closed every one. */
const allClosed = () => new Promise<void>((resolve) => (hung.size === 0 ? resolve() : emptied.push(resolve)));
const received: string[] = [];
const drip = setInterval(() => {
  for (const response of hung) response.write(" ");
}, 50);
const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on("data", (chunk: Buffer) => chunks.push(chunk));
  request.on("end", () => {
    response.writeHead(200, { "content-type": "application/json" });
    if (recovered) {
      received.push(Buffer.concat(chunks).toString("utf8"));
      response.end("{}");
      return;
    }
    response.write("{");
    hung.add(response);
    response.on("close", () => {
      hung.delete(response);
      if (hung.size === 0) for (const waiter of emptied.splice(0)) waiter();
    });
  });
});
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
afterAll(() => {
  clearInterval(drip);
  server.closeAllConnections();
  server.close();
  vi.unstubAllEnvs();
});

// The exporter reads its endpoint and timeout from the environment when it is made.
vi.stubEnv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`);
vi.stubEnv("OTEL_EXPORTER_OTLP_TIMEOUT", "300");
const { CONCURRENT_EXPORTS, loadTracing } = await import("../../src/telemetry/provider.ts");

test("exports a collector never finishes are cut at the timeout and their connections closed, so they do not pile up: the spans after it recovers are sent", async () => {
  const problems: string[] = [];
  const tracing = await loadTracing("http/json", "test", (message) => problems.push(message));
  // Twice the exports pi-flow keeps open at once: were the hung ones left open, the exporter would
  // refuse every export past that limit. Each costs its 300 ms timeout.
  for (let round = 0; round < 2 * CONCURRENT_EXPORTS; round++) {
    tracing.tracer.startSpan(`hung ${round}`).end();
    await tracing.flush().catch(() => undefined); // a failed export rejects the flush; flushTelemetry says so once
  }
  expect(problems).toEqual(["spans could not be exported (http/json): the collector did not finish answering within 300 ms"]);

  recovered = true;
  tracing.tracer.startSpan("after the collector recovered").end();
  await tracing.flush();
  expect(received.join("\n")).toContain("after the collector recovered");
  // Not one hung answer is still being read: pi-flow closed each connection.
  await allClosed();
});

test("a collector that answers at once takes export after export on one kept-alive connection, and Node warns of nothing", async () => {
  recovered = true;
  const warned: Error[] = [];
  const onWarning = (warning: Error) => warned.push(warning);
  process.on("warning", onWarning);
  try {
    const tracing = await loadTracing("http/json", "test", () => undefined);
    for (let round = 0; round < 15; round++) {
      tracing.tracer.startSpan(`prompt ${round}`).end();
      await tracing.flush();
    }
    expect(received.filter((body) => body.includes("prompt ")).length).toBe(15);
    // Node emits its warnings on the next tick: let one pass before looking.
    await new Promise((resolve) => setImmediate(resolve));
    expect(warned.map((warning) => warning.message)).toEqual([]);
  } finally {
    process.off("warning", onWarning);
  }
});
