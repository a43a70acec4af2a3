import { createHash } from "node:crypto";
import { SCHEMA_WORK_LIMIT_MS, SCHEMA_WORK_MEMORY_MB } from "./schema-limits.ts";
import { patternsIn } from "./schema-stops.ts";
import { generateInWorker } from "./schema-worker.ts";
import { checkStructuredValue } from "./structured-answer.ts";

/** Who asked, as the stub answer names it and derives its seed from. */
export interface StubCall {
  agent: string;
  description: string;
  occurrence: number;
}

/**
 * The longest JSON text a stub value may have: it is saved in the run's journal, shown and, with
 * --record, written to a cassette a person edits. minItems: 1000000 generates in time, as 4 MB.
 */
export const STUB_VALUE_MAX_BYTES = 1_000_000;

/** Different seeds a value is tried with before the stub gives up on a schema. */
const ATTEMPTS = 16;

/**
 * A child's own seed: the run's seed mixed with who asked, so a child's value does not depend on
 * the order in which parallel children happen to start.
 */
export function childSeed(seed: number, call: StubCall): number {
  const digest = createHash("sha256").update(JSON.stringify([seed, call.agent, call.description, call.occurrence])).digest();
  return digest.readUInt32BE(0);
}

export type StubValue = { ok: true; value: unknown } | { ok: false; message: string; cancelled?: true };

/** Why generating stopped, naming the schema's patterns: one with large repetition counts asks for a huge string. */
function tooLarge(schema: Record<string, unknown>, stopped: "too_slow" | "out_of_memory"): string {
  const patterns = patternsIn(schema).slice(0, 3).map((pattern) => JSON.stringify(pattern.slice(0, 200)));
  const named = patterns.length === 0 ? "" : ` (its patterns: ${patterns.join(", ")})`;
  const why = stopped === "too_slow" ? `took longer than ${SCHEMA_WORK_LIMIT_MS / 1000} s` : `ran out of the worker's ${SCHEMA_WORK_MEMORY_MB} MB of memory`;
  return (
    `generating a value ${why} and was stopped: the schema asks for a value too large to generate${named}; ` +
    "a pattern with large repetition counts such as ^((a{1000}){1000}){100}$, or a large minLength, minItems or minProperties, does"
  );
}

/** Why a value generated in time was refused: its size, the cap, and what asks for that much. */
function overCap(bytes: number): string {
  const megabytes = (size: number) => (size / 1_000_000).toFixed(1).replace(/\.0$/, "");
  return (
    `the generated value is ${(bytes / 1_000_000).toFixed(1)} MB of JSON, more than the stub harness's ${megabytes(STUB_VALUE_MAX_BYTES)} MB: ` +
    "a large minLength, minItems or minProperties, or a pattern with large repetition counts, asks for that much; lower it, or answer this child from a cassette"
  );
}

/**
 * A value that satisfies `schema`, the same for the same seed. Each candidate is generated in the
 * checking worker (a schema can ask for a string of 10^8 characters), then checked with the
 * validator the runtime checks answers with, and as it checks answers; a cancel (`signal`) stops
 * either at once. A schema none of them
 * satisfies is said so, not faked.
 */
export async function valueForSchema(schema: Record<string, unknown>, seed: number, signal?: AbortSignal): Promise<StubValue> {
  let last = "no value was generated";
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    // Every optional property is filled on the first tries: a skeleton a person edits shows them all.
    const options = { seed: (seed + attempt) >>> 0, alwaysFakeOptionals: attempt < ATTEMPTS / 2, maxDefaultItems: 3, refDepthMax: 3 };
    const generated = await generateInWorker(schema, options, STUB_VALUE_MAX_BYTES, { signal });
    if (generated.kind === "cancelled") return { ok: false, cancelled: true, message: "Generating a stub value was cancelled." };
    if (generated.kind === "too_slow" || generated.kind === "out_of_memory") {
      // Another seed asks for the same size: one stop is enough.
      last = tooLarge(schema, generated.kind);
      break;
    }
    if (generated.kind === "too_large") {
      // Another seed asks for the same size: one refusal is enough.
      last = overCap(generated.bytes);
      break;
    }
    if (generated.kind === "error") {
      last = generated.message;
      continue;
    }
    const value = generated.value;
    const checked = await checkStructuredValue(value, schema, signal);
    if (!checked.ok && checked.cancelled) return { ok: false, cancelled: true, message: "Generating a stub value was cancelled." };
    if (checked.ok) return { ok: true, value };
    last = checked.message.replace(/^The child's answer/, "the generated value").replace(/\.$/, "");
    // A check stopped for time would be stopped again: one is enough.
    if (checked.stopped) break;
  }
  return { ok: false, message: `The stub harness found no value that satisfies this outputSchema (${last}). Answer this child from a cassette instead (--replay).` };
}

/** The answer of a child with no outputSchema: a short text that names the call and says no model spoke. */
export function stubText(call: StubCall): string {
  return `[stub] ${call.agent} ${JSON.stringify(call.description)} #${call.occurrence}: no model was called.`;
}
