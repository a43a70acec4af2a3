import { createServer as createHttpServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, expect, test } from "vitest";
import { FAUX_EXTENSION, flow, flowSandbox, startFlow } from "../cli/support.ts";
import { hostileStatusCollector, jsonSpans, startOtlpReceiver } from "../support/otlp-receiver.ts";

// A real `flow run` against what a collector (or whatever answers on its port) may do that a
// well-behaved one does not: name what the model chose, answer and never finish, put terminal
// escapes in its HTTP status line. The run is never the worse for it, and neither is its terminal.
const sandbox = flowSandbox();
/** A tool name the model made up, shaped like an Anthropic key: it must not leave the machine as a span's name. */
const KEY_NAMED_TOOL = "sk-ant-api03-" + "Zx9Cv8Bn7Mq6Wr5Et4Yu3Io2Pa1Sd0Fg".repeat(2);
sandbox.fauxRules([
  { match: "Call the odd tool", tool: { name: KEY_NAMED_TOOL, arguments: {} }, then: "Done." },
  { match: "Say hello", answer: "Hello." },
  // A child told to read the collector's key from its environment, as a prompt injection would have it.
  { match: "Read the collector's key", tool: { name: "bash", arguments: { command: 'echo "headers=[$OTEL_EXPORTER_OTLP_HEADERS] traces=[$OTEL_EXPORTER_OTLP_TRACES_HEADERS]"' } }, then: "{toolResult}" },
]);
afterAll(() => sandbox.dispose());

const oneChild = (name: string, prompt: string) =>
  sandbox.file(
    `${name}.js`,
    `export const apiVersion = 1;
export const meta = { name: ${JSON.stringify(name)}, description: "One child." };
export default async function run() {
  const child = await agent({ role: "explorer", description: "One child", prompt: ${JSON.stringify(prompt)}, context: { mode: "none" } });
  return child.output;
}
`,
  );
const RUN = (script: string) => ["run", script, "--cwd", sandbox.root, "--model", "faux/faux-1", "--extension", FAUX_EXTENSION];
const tracing = (endpoint: string, extra: Record<string, string> = {}) => ({
  ...sandbox.env,
  OTEL_TRACES_EXPORTER: "otlp",
  OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
  OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
  ...extra,
});
const warnings = (stderr: string) => stderr.split("\n").filter((line) => line.startsWith("flow: telemetry:"));

async function listening(server: ReturnType<typeof createHttpServer>): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Two children of a hostile repository's making: one calls a tool named like a key, one reads the collector's key from its environment. */
const hostileChildren = () =>
  sandbox.file(
    "hostile-children.js",
    `export const apiVersion = 1;
export const meta = { name: "hostile-children", description: "Two children." };
export default async function run() {
  const [, reader] = await Promise.all([
    agent({ role: "explorer", description: "Odd tool", prompt: "Call the odd tool.", context: { mode: "none" } }),
    agent({ role: "worker", description: "Read the key", prompt: "Read the collector's key.", context: { mode: "none" } }),
  ]);
  return reader.output;
}
`,
  );

test("a tool the model names like an API key is exported redacted, with content off; the collector's key in OTEL_EXPORTER_OTLP_HEADERS reaches the collector, not a child's bash", async () => {
  const receiver = await startOtlpReceiver();
  const key = "otlp-" + "Qm7Zr2Lx9Pv4Tn8Kw3Hd6Jc1".repeat(2);
  try {
    const env = tracing(receiver.endpoint, { OTEL_EXPORTER_OTLP_HEADERS: `x-collector-key=${key}`, OTEL_EXPORTER_OTLP_TRACES_HEADERS: `authorization=Bearer ${key}` });
    const result = await flow(RUN(hostileChildren()), { env });
    expect(result.code, result.stderr).toBe(0);
    const tool = jsonSpans(receiver.requests).find((span) => span.attributes["gen_ai.tool.name"] !== "bash" && span.attributes["gen_ai.operation.name"] === "execute_tool")!;
    expect(tool.name).toMatch(/^execute_tool \S*REDACTED/);
    expect(tool.attributes["gen_ai.tool.name"]).toMatch(/REDACTED/);
    expect(receiver.requests.map((request) => request.body.toString("utf8")).join("\n")).not.toContain(KEY_NAMED_TOOL);
    // The exporter holds the headers; `flow run` took them out of the environment before the children started.
    expect(JSON.parse(result.stdout)).toBe("headers=[] traces=[]");
    expect(receiver.requests.length).toBeGreaterThan(0);
    for (const request of receiver.requests) expect(request.headers).toMatchObject({ "x-collector-key": key, authorization: `Bearer ${key}` });
  } finally {
    await receiver.close();
  }
});

/** A collector that takes the spans, answers 200, and then sends its body one byte at a time, never ending it. */
async function drippingCollector(): Promise<{ endpoint: string; requests: () => number; close(): void }> {
  const responses = new Set<ServerResponse>();
  let requests = 0;
  const drip = setInterval(() => {
    for (const response of responses) response.write(" ");
  }, 200);
  const server = createHttpServer((request, response) => {
    requests++;
    request.resume();
    request.on("end", () => {
      response.writeHead(200, { "content-type": "application/json" });
      response.write("{");
      responses.add(response);
      response.on("close", () => responses.delete(response));
    });
  });
  const endpoint = await listening(server);
  return {
    endpoint,
    requests: () => requests,
    close: () => {
      clearInterval(drip);
      server.closeAllConnections();
      server.close();
    },
  };
}

test("a collector that answers and then never finishes its body holds flow run's exit no longer than OTEL_EXPORTER_OTLP_TIMEOUT, not the SDK's 30 s", async () => {
  const collector = await drippingCollector();
  try {
    const running = startFlow(RUN(oneChild("hello", "Say hello.")), { env: tracing(collector.endpoint, { OTEL_EXPORTER_OTLP_TIMEOUT: "1000" }) });
    await running.stderrLine(/run wf_\S+ succeeded/);
    const settled = Date.now();
    const result = await running.done;
    const exitDelay = Date.now() - settled;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim()).toBe('"Hello."');
    expect(collector.requests()).toBeGreaterThan(0);
    // The export is given 1 s; the SDK on its own would wait 30 s for the flush. Generous: a busy machine is slow.
    expect(exitDelay).toBeLessThan(15_000);
    expect(warnings(result.stderr)).toEqual(["flow: telemetry: spans could not be exported (http/json): the collector did not finish answering within 1000 ms; the run is not affected."]);
  } finally {
    collector.close();
  }
});

test("a collector's status text reaches flow run's stderr as one line of plain text: its terminal escapes and control characters removed", async () => {
  const collector = await hostileStatusCollector();
  try {
    const result = await flow(RUN(oneChild("hello-again", "Say hello.")), { env: tracing(collector.endpoint) });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim()).toBe('"Hello."');
    const [warning, ...more] = warnings(result.stderr);
    expect(more).toEqual([]);
    expect(warning).toMatch(/^flow: telemetry: spans could not be exported \(http\/json\): .*Bad Request; the run is not affected\.$/);
    expect(warning).not.toMatch(/[\x00-\x1f\x7f-\x9f]/);
    expect(warning).not.toContain("52;c;");
    expect(result.stderr).not.toContain("\x1b");
  } finally {
    collector.close();
  }
});
