import { afterAll, expect, test, vi } from "vitest";
import { startOtlpReceiver, type OtlpReceiver } from "../support/otlp-receiver.ts";
import { loadTracing } from "../../src/telemetry/provider.ts";

// The resource every exported span carries: OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME, read as
// OpenTelemetry's SDK environment says, and sent to the collector as its receiver sees them.
const receiver = await startOtlpReceiver();
afterAll(async () => {
  await receiver.close();
  vi.unstubAllEnvs();
});

const SECRET = "sk-ant-api03-" + "Qw8Er4Ty6Ui2Op0As3Df5Gh7Jk9Lz1Xc".repeat(2);

/** Exports one span with the environment as given, and answers the resource the receiver got with it, and the problems said. */
async function exportedResource(env: Record<string, string>, at: OtlpReceiver = receiver): Promise<{ resource: Record<string, string>; problems: string[] }> {
  vi.unstubAllEnvs();
  vi.stubEnv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", `${at.endpoint}/v1/traces`);
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  const seen = at.requests.length;
  const problems: string[] = [];
  const tracing = await loadTracing("http/json", "9.9.9", (message) => problems.push(message));
  tracing.tracer.startSpan("one").end();
  await tracing.flush();
  const body = JSON.parse(at.requests.slice(seen).at(-1)!.body.toString("utf8")) as { resourceSpans: { resource: { attributes: { key: string; value: { stringValue?: string } }[] } }[] };
  const resource = Object.fromEntries(body.resourceSpans[0]!.resource.attributes.map(({ key, value }) => [key, value.stringValue ?? ""]));
  return { resource, problems };
}

test("OTEL_RESOURCE_ATTRIBUTES' pairs are on the resource, percent-decoded and trimmed, and OTEL_SERVICE_NAME names the service over its service.name", async () => {
  const { resource, problems } = await exportedResource({
    OTEL_RESOURCE_ATTRIBUTES: " deployment.environment = staging ,team=ml%2Cinfra,note=a%3Db%20c,service.name=from-list,,",
    OTEL_SERVICE_NAME: " billing-agents ",
  });
  expect(resource).toMatchObject({ "deployment.environment": "staging", team: "ml,infra", note: "a=b c", "service.name": "billing-agents", "service.version": "9.9.9" });
  expect(problems).toEqual([]);
  // Without OTEL_SERVICE_NAME the list's service.name stands; with neither, pi-flow.
  expect((await exportedResource({ OTEL_RESOURCE_ATTRIBUTES: "service.name=from-list" })).resource["service.name"]).toBe("from-list");
  expect((await exportedResource({ OTEL_SERVICE_NAME: "  " })).resource["service.name"]).toBe("pi-flow");
});

test("a secret in OTEL_RESOURCE_ATTRIBUTES, by its shape or under a secret's name, is redacted before it leaves with every export", async () => {
  const { resource } = await exportedResource({ OTEL_RESOURCE_ATTRIBUTES: `owner=ml-team,debug.key=${SECRET},api_token=hunter2hunter2hunter2` });
  expect(resource.owner).toBe("ml-team");
  expect(resource["debug.key"]).toMatch(/REDACTED/);
  expect(resource.api_token).toMatch(/REDACTED/);
  expect(receiver.requests.at(-1)!.body.toString("utf8")).not.toContain(SECRET);
  expect(receiver.requests.at(-1)!.body.toString("utf8")).not.toContain("hunter2");
});

test("a list that cannot be read is ignored whole, as the spec asks, and said once without its text", async () => {
  for (const list of [`team=ml,${SECRET}`, "team=ml,broken=%E0%A4%A"]) {
    const { resource, problems } = await exportedResource({ OTEL_RESOURCE_ATTRIBUTES: list });
    expect(resource.team).toBeUndefined();
    expect(resource["service.name"]).toBe("pi-flow");
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^OTEL_RESOURCE_ATTRIBUTES is ignored: its entry 2 /);
    expect(problems[0]).not.toContain(SECRET);
  }
});
