import { redactText, redactValueUnder } from "../runs/index.ts";

type Env = Readonly<Record<string, string | undefined>>;

/** What a resource attribute's value may hold: the spec's SDKs cut at 255 characters too. */
const MAX_VALUE = 255;

/**
 * The resource every span carries, as OpenTelemetry's SDK environment says it
 * (https://opentelemetry.io/docs/specs/otel/resource/sdk/#specifying-resource-information-via-an-environment-variable):
 * OTEL_RESOURCE_ATTRIBUTES is `key=value` pairs separated by commas, each key and value percent-decoded,
 * keys and values trimmed; OTEL_SERVICE_NAME names the service over any `service.name` there; else
 * `pi-flow`. A list that cannot be read (a pair without `=` or a key, a bad `%` escape) is ignored
 * whole, as the spec asks, and said once through `onProblem`, without its text (it may hold a
 * secret). A value that looks like a secret, or sits under a secret's name, is redacted: a resource
 * leaves with every export, to a collector any number of people read.
 */
export function resourceAttributes(env: Env, version: string, onProblem: (message: string) => void): Record<string, string> {
  const attributes: Record<string, string> = { "service.name": "pi-flow", "service.version": version, ...listed(env.OTEL_RESOURCE_ATTRIBUTES, onProblem) };
  const serviceName = env.OTEL_SERVICE_NAME?.trim();
  if (serviceName) attributes["service.name"] = shown("service.name", serviceName);
  return attributes;
}

function listed(text: string | undefined, onProblem: (message: string) => void): Record<string, string> {
  const attributes: Record<string, string> = {};
  if (text === undefined || text.trim() === "") return attributes;
  for (const [position, entry] of text.split(",").entries()) {
    if (entry.trim() === "") continue;
    const equals = entry.indexOf("=");
    if (equals < 0 || entry.slice(0, equals).trim() === "") {
      onProblem(`OTEL_RESOURCE_ATTRIBUTES is ignored: its entry ${position + 1} is not key=value`);
      return {};
    }
    // "," and "=" in a key or value are percent-encoded, so both are decoded once split.
    const key = percentDecoded(entry.slice(0, equals).trim());
    const value = percentDecoded(entry.slice(equals + 1).trim());
    if (key === undefined || value === undefined) {
      onProblem(`OTEL_RESOURCE_ATTRIBUTES is ignored: its entry ${position + 1} has a % escape that is not UTF-8 in two hex digits`);
      return {};
    }
    attributes[redactText(key).text] = shown(key, value);
  }
  return attributes;
}

function percentDecoded(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

/** A value as the resource carries it: redacted under its key and by its shape, and bounded. */
function shown(key: string, value: string): string {
  const underKey = redactValueUnder(key, value);
  const redacted = redactText(typeof underKey === "string" ? underKey : "").text;
  return redacted.length <= MAX_VALUE ? redacted : `${redacted.slice(0, MAX_VALUE)}…`;
}
