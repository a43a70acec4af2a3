/**
 * The sampler and span limits OpenTelemetry's SDK environment names
 * (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/), read as the
 * spec says: OTEL_TRACES_SAMPLER (case-insensitive; `parentbased_always_on` when unset) with
 * OTEL_TRACES_SAMPLER_ARG, the ratio of the `traceidratio` samplers (1.0 when unset), and the span
 * limits, each a non-negative integer, the span-specific variable over the general one. A value
 * pi-flow cannot use (a sampler it does not have, a ratio outside [0, 1], a limit that is not a
 * whole number) is said once through `onProblem` and the default used, as the spec asks.
 */
type Env = Readonly<Record<string, string | undefined>>;

export type RootSampling = { kind: "always_on" } | { kind: "always_off" } | { kind: "traceidratio"; ratio: number };

/** Whether a span with a parent follows its parent's decision (the `parentbased_*` samplers), and how a root span is decided. */
export interface Sampling {
  parentBased: boolean;
  root: RootSampling;
}

/** The SDK's SpanLimits, only those the environment sets: the SDK keeps its defaults for the rest. */
export interface SpanLimitsFromEnv {
  attributeValueLengthLimit?: number;
  attributeCountLimit?: number;
  eventCountLimit?: number;
  linkCountLimit?: number;
  attributePerEventCountLimit?: number;
  attributePerLinkCountLimit?: number;
}

const set = (value: string | undefined): string | undefined => (value === undefined || value.trim() === "" ? undefined : value.trim());

const DEFAULT_SAMPLING: Sampling = { parentBased: true, root: { kind: "always_on" } };

export function samplingFromEnv(env: Env, onProblem: (message: string) => void): Sampling {
  const name = set(env.OTEL_TRACES_SAMPLER)?.toLowerCase();
  if (name === undefined) return DEFAULT_SAMPLING;
  const parentBased = name.startsWith("parentbased_");
  const base = parentBased ? name.slice("parentbased_".length) : name;
  if (base === "always_on" || base === "always_off") return { parentBased, root: { kind: base } };
  if (base === "traceidratio") return { parentBased, root: { kind: "traceidratio", ratio: ratioFromEnv(env, onProblem) } };
  // The name is the user's, and may be anything: only its length is said.
  onProblem(`OTEL_TRACES_SAMPLER names a sampler pi-flow does not have (${name.length} characters); parentbased_always_on is used: use always_on, always_off, traceidratio or their parentbased_ forms`);
  return DEFAULT_SAMPLING;
}

function ratioFromEnv(env: Env, onProblem: (message: string) => void): number {
  const text = set(env.OTEL_TRACES_SAMPLER_ARG);
  if (text === undefined) return 1;
  const ratio = Number(text);
  if (Number.isFinite(ratio) && ratio >= 0 && ratio <= 1) return ratio;
  onProblem("OTEL_TRACES_SAMPLER_ARG is not a ratio from 0 to 1; 1.0 is used");
  return 1;
}

/** Each limit the SDK has, and the variables that set it, the specific one first. */
const LIMITS: readonly [keyof SpanLimitsFromEnv, readonly string[]][] = [
  ["attributeValueLengthLimit", ["OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT", "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT"]],
  ["attributeCountLimit", ["OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT", "OTEL_ATTRIBUTE_COUNT_LIMIT"]],
  ["eventCountLimit", ["OTEL_SPAN_EVENT_COUNT_LIMIT"]],
  ["linkCountLimit", ["OTEL_SPAN_LINK_COUNT_LIMIT"]],
  ["attributePerEventCountLimit", ["OTEL_EVENT_ATTRIBUTE_COUNT_LIMIT"]],
  ["attributePerLinkCountLimit", ["OTEL_LINK_ATTRIBUTE_COUNT_LIMIT"]],
];

export function spanLimitsFromEnv(env: Env, onProblem: (message: string) => void): SpanLimitsFromEnv {
  const limits: SpanLimitsFromEnv = {};
  for (const [limit, names] of LIMITS) {
    for (const name of names) {
      const text = set(env[name]);
      if (text === undefined) continue;
      if (/^\d+$/.test(text) && Number.isSafeInteger(Number(text))) {
        limits[limit] = Number(text);
        break;
      }
      // An unusable value is as if unset: the general variable, if set, still counts.
      onProblem(`${name} is not a whole number of 0 or more; it is ignored`);
    }
  }
  return limits;
}
