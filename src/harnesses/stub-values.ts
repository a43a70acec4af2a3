import { createHash } from "node:crypto";
import { generateSync, type JsonSchema } from "json-schema-faker";
import { checkStructuredValue } from "./structured-answer.ts";

/** Who asked, as the stub answer names it and derives its seed from. */
export interface StubCall {
  agent: string;
  description: string;
  occurrence: number;
}

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

export type StubValue = { ok: true; value: unknown } | { ok: false; message: string };

function sample(schema: Record<string, unknown>, seed: number, fillOptionals: boolean): unknown {
  // Every optional property is filled on the first tries: a skeleton a person edits shows them all.
  return generateSync(schema as JsonSchema, { seed, alwaysFakeOptionals: fillOptionals, maxDefaultItems: 3, refDepthMax: 3 });
}

/**
 * A value that satisfies `schema`, the same for the same seed. Each candidate is checked with the
 * validator the runtime checks answers with, and as it checks answers: a schema with a pattern in
 * a worker, so a backtracking pattern cannot freeze the host. A schema none of them satisfies is
 * said so, not faked.
 */
export async function valueForSchema(schema: Record<string, unknown>, seed: number): Promise<StubValue> {
  let last = "no value was generated";
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    let value: unknown;
    try {
      value = sample(schema, (seed + attempt) >>> 0, attempt < ATTEMPTS / 2);
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
      continue;
    }
    const checked = await checkStructuredValue(value, schema);
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
