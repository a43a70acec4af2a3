import type { SchemaViolation } from "../contract/schema-violation.ts";
import { stoppedCheck } from "./schema-stops.ts";
import { checkInWorker } from "./schema-worker.ts";

/** The instruction a child gets when its caller asked for a structured answer. */
export function structuredAnswerInstruction(schema: Record<string, unknown>): string {
  return [
    "Your final message must be only one JSON value that satisfies this JSON Schema, with no prose around it:",
    JSON.stringify(schema),
  ].join("\n");
}

/** A final message may wrap its JSON in a code fence; the value inside is the answer. */
function unfence(text: string): string {
  const fenced = /^```(?:json)?\s*\n([\s\S]*?)\n```\s*$/.exec(text.trim());
  return fenced ? fenced[1]! : text.trim();
}

/** `stopped`: the check ran past its time or memory limit and was stopped (a backtracking pattern); `cancelled`: the run's signal stopped it. */
export type StructuredAnswer = { ok: true; value: unknown } | { ok: false; message: string; stopped?: true; cancelled?: true };

/** Parses and checks a structured answer; a child that missed the schema has failed its task. */
export async function parseStructuredAnswer(text: string, schema: Record<string, unknown>, signal?: AbortSignal): Promise<StructuredAnswer> {
  const json = unfence(text);
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return { ok: false, message: "The child's answer is not JSON, but an outputSchema was given." };
  }
  const inexact = inexactNumber(json);
  if (inexact) {
    return {
      ok: false,
      message: `The child's answer holds the number ${inexact.source.slice(0, 80)}, which a JSON number here cannot hold exactly (it reads as ${inexact.read}); ask for such a value as a string in outputSchema.`,
    };
  }
  return checkStructuredValue(value, schema, signal);
}

/** What a number's reviver sees besides its value (Node 22): the text it was parsed from. */
type ReviverContext = { source?: string };

/**
 * A number the answer writes that JavaScript cannot hold as written: an integer past 2^53 (a
 * 64-bit ID) reads as a neighbour, and 1e400 as Infinity, which the run's records save as null.
 * The value delivered would silently differ from the child's, so the answer fails naming it.
 * Decimals are approximations anyway (0.1 is no exact double) and pass.
 */
function inexactNumber(json: string): { source: string; read: string } | undefined {
  // Most answers have no run of 16 digits and no three-digit exponent: parsed once, with no reviver.
  if (!/\d{16}|[eE][+-]?\d{3}/.test(json)) return undefined;
  let found: { source: string; read: string } | undefined;
  JSON.parse(json, (_key, value: unknown, context?: ReviverContext) => {
    if (found === undefined && typeof value === "number" && context?.source !== undefined && !heldAsWritten(value, context.source)) {
      found = { source: context.source, read: String(value) };
    }
    return value;
  });
  return found;
}

function heldAsWritten(value: number, source: string): boolean {
  if (!Number.isFinite(value)) return false;
  if (Number.isSafeInteger(value) || !/^-?\d+$/.test(source)) return true;
  return BigInt(source) === BigInt(value);
}

/**
 * Checks an already parsed answer (a CLI that enforces the schema itself hands over a value), in
 * the checking worker: a pattern that backtracks catastrophically, uniqueItems over a long array
 * (quadratic) or $refs that branch into each other (exponential) cannot freeze the host. A cancel
 * (`signal`) stops the check at once; `limitMs` (the worker's 3 s unless given) stops one too slow.
 */
export async function checkStructuredValue(value: unknown, schema: Record<string, unknown>, signal?: AbortSignal, limitMs?: number): Promise<StructuredAnswer> {
  const tooDeep = depthRefusal(value);
  if (tooDeep) return tooDeep;
  const checked = await checkInWorker(value, schema, { signal, limitMs });
  if (checked.kind === "checked") return answerFor(value, checked.violation);
  if (checked.kind === "cancelled") return { ok: false, cancelled: true, message: "Checking the child's answer against outputSchema was cancelled." };
  if (checked.kind === "error") return { ok: false, message: `The child's answer could not be checked against outputSchema: ${checked.message}.` };
  return { ok: false, stopped: true, message: `${stoppedCheck("the child's answer against outputSchema", checked, schema)}.` };
}

// Redacting, saving and delivering a value all walk it recursively: one nested deeper than this
// would overflow the host's stack there, after the child was counted a success.
function depthRefusal(value: unknown): StructuredAnswer | undefined {
  if (!deeperThan(value, MAX_DEPTH)) return undefined;
  return { ok: false, message: `The child's answer nests arrays and objects more than ${MAX_DEPTH} levels deep.` };
}

function answerFor(value: unknown, violation: SchemaViolation | undefined): StructuredAnswer {
  if (!violation) return { ok: true, value };
  return { ok: false, message: `The child's answer does not satisfy outputSchema at ${violation.pointer || "(the value)"}: ${violation.message}.` };
}

/** The deepest nesting of arrays and objects an answer may have. */
export const MAX_DEPTH = 512;

/** Whether `value` nests arrays and objects deeper than `limit` levels; checked without recursion. */
function deeperThan(value: unknown, limit: number): boolean {
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const { value: next, depth } = stack.pop()!;
    if (next === null || typeof next !== "object") continue;
    if (depth >= limit) return true;
    for (const child of Object.values(next)) if (child !== null && typeof child === "object") stack.push({ value: child, depth: depth + 1 });
  }
  return false;
}
