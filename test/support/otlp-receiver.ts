/**
 * A stand-in OpenTelemetry collector: an OTLP/HTTP receiver on loopback that keeps every request
 * it is sent (path, content type, headers, body) and answers 200, as a collector does.
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { createServer as createTcpServer, type AddressInfo } from "node:net";

export interface OtlpRequest {
  path: string;
  contentType: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface OtlpReceiver {
  endpoint: string;
  requests: OtlpRequest[];
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const requests: OtlpRequest[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      requests.push({ path: request.url ?? "", contentType: request.headers["content-type"] ?? "", headers: request.headers, body: Buffer.concat(chunks) });
      const json = (request.headers["content-type"] ?? "").includes("json");
      response.writeHead(200, { "content-type": json ? "application/json" : "application/x-protobuf" });
      response.end(json ? "{}" : "");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { endpoint: `http://127.0.0.1:${port}`, requests, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** A loopback address where nothing listens: connections to it are refused. */
export async function refusingEndpoint(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/** Terminal escapes a hostile collector puts in its status line: OSC 52 writes the clipboard, CSI 2J clears the screen, OSC 0 sets the title. */
export const HOSTILE_REASON = "\x1b]52;c;ZWNobyBvd25lZA==\x07\x1b[2J\x1b]0;owned\x07Bad\x08\tRequest";

/** A collector whose every answer is `400 <HOSTILE_REASON>`, written on the socket: Node's HTTP server would not send such a status line. */
export async function hostileStatusCollector(): Promise<{ endpoint: string; close(): Promise<void> }> {
  const server = createTcpServer((socket) => {
    let head = "";
    socket.on("error", () => undefined);
    socket.on("data", (chunk: Buffer) => {
      head += chunk.toString("latin1");
      if (!head.includes("\r\n\r\n")) return;
      head = "";
      socket.end(`HTTP/1.1 400 ${HOSTILE_REASON}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { endpoint: `http://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** One span of an OTLP/JSON trace export, its attributes flattened to plain values. */
export interface JsonSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Record<string, string | number | boolean>;
  events: { name: string }[];
  status?: { code?: number; message?: string };
}

interface AnyValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}

export function jsonSpans(requests: readonly OtlpRequest[]): JsonSpan[] {
  const spans: JsonSpan[] = [];
  for (const request of requests) {
    const payload = JSON.parse(request.body.toString("utf8")) as {
      resourceSpans?: { scopeSpans?: { spans?: (Omit<JsonSpan, "attributes"> & { attributes?: { key: string; value: AnyValue }[] })[] }[] }[];
    };
    for (const resource of payload.resourceSpans ?? [])
      for (const scope of resource.scopeSpans ?? [])
        for (const span of scope.spans ?? []) {
          const attributes: JsonSpan["attributes"] = {};
          for (const { key, value } of span.attributes ?? []) {
            attributes[key] = value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : undefined) ?? value.doubleValue ?? value.boolValue ?? "";
          }
          spans.push({ ...span, attributes, events: span.events ?? [] });
        }
  }
  return spans;
}
