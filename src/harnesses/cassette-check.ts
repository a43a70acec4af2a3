/**
 * Checks a cassette's lines the way a person writes them: every field a replay does not need is
 * optional, and every mistake of every line is found in one pass, so a hand-written cassette is
 * fixed in one go rather than one error per try.
 */
import { usageAmount } from "../contract/run-schema.ts";
import { isRecord } from "./cli/guards.ts";
import { changesProblems } from "./cassette-changes.ts";

export const CASSETTE_FORMAT = "pi-flow-cassette";
export const CASSETTE_VERSION = 1;

const ENTRY_FIELDS = new Set(["key", "outcome", "answer", "error", "usage", "timing", "source", "changes"]);
const KEY_FIELDS = new Set(["agent", "description", "occurrence", "promptHash"]);
const OUTCOMES = ["succeeded", "failed", "timed_out"];
const USAGE_COUNTS = ["turns", "toolCalls", "inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens"];

const isCount = (value: unknown): value is number => typeof value === "number" && Number.isSafeInteger(value) && value >= 0;

/** What is wrong with a header line: format and version are all it needs. */
export function headerProblems(value: unknown): string[] {
  if (!isRecord(value) || value.format !== CASSETTE_FORMAT) return [`the first line must be the header {"format":"${CASSETTE_FORMAT}","version":${CASSETTE_VERSION}}`];
  const problems: string[] = [];
  if (value.version !== CASSETTE_VERSION) problems.push(`cassette version ${JSON.stringify(value.version)} is not supported (supported: ${CASSETTE_VERSION})`);
  if (value.illustrative !== undefined && typeof value.illustrative !== "boolean") problems.push("illustrative must be true or false");
  if (value.note !== undefined && typeof value.note !== "string") problems.push("note must be a string");
  if (value.createdAt !== undefined && typeof value.createdAt !== "string") problems.push("createdAt must be a string");
  return problems;
}

const unknownFields = (value: Record<string, unknown>, known: ReadonlySet<string>, prefix: string): string[] =>
  Object.keys(value)
    .filter((field) => !known.has(field))
    .map((field) => `unknown field ${prefix}${JSON.stringify(field)} (known: ${[...known].join(", ")})`);

function keyProblems(key: unknown): string[] {
  if (!isRecord(key)) return ["key must be an object { agent, description }"];
  const problems = unknownFields(key, KEY_FIELDS, "key.");
  if (typeof key.agent !== "string" || key.agent === "") problems.push('key.agent must be a string such as "role:reviewer" or "agent:<definition>"');
  if (typeof key.description !== "string") problems.push("key.description must be a string");
  if (key.occurrence !== undefined && (!isCount(key.occurrence) || key.occurrence < 1)) problems.push("key.occurrence must be a positive integer");
  if (key.promptHash !== undefined && typeof key.promptHash !== "string") problems.push("key.promptHash must be a string");
  return problems;
}

function resultProblems(value: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const outcome = value.outcome ?? "succeeded";
  if (typeof outcome !== "string" || !OUTCOMES.includes(outcome)) problems.push(`outcome must be ${OUTCOMES.join(", ")} (or left out: succeeded)`);
  else if (outcome === "succeeded" && value.answer === undefined) problems.push("answer is missing (the child's text, or its JSON value under an outputSchema)");
  if (value.error !== undefined && (!isRecord(value.error) || typeof value.error.message !== "string")) problems.push("error must be { message } (code is optional)");
  return problems;
}

function evidenceProblems(value: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const { usage, timing } = value;
  // Every usage key a recording writes becomes the replayed run's usage as it is: a cost that is a
  // string would be a string in the run's record, and in every total and report read from it.
  const cost = isRecord(usage) ? usage.costUsd : undefined;
  const costOk = cost === undefined || (typeof cost === "number" && usageAmount(cost) === cost);
  if (usage !== undefined && (!isRecord(usage) || !costOk || !USAGE_COUNTS.every((field) => usage[field] === undefined || isCount(usage[field])))) {
    problems.push(`usage must be an object of counts (${USAGE_COUNTS.join(", ")}) and a costUsd in dollars`);
  }
  if (timing !== undefined && (!isRecord(timing) || (timing.startedAt !== undefined && typeof timing.startedAt !== "string") || (timing.durationMs !== undefined && !isCount(timing.durationMs)))) {
    problems.push("timing must be { startedAt, durationMs }");
  }
  if (value.source !== undefined && value.source !== "model" && value.source !== "stub") problems.push('source must be "model" or "stub" (or left out: written by hand)');
  if (value.changes !== undefined) problems.push(...changesProblems(value.changes));
  return problems;
}

/** What is wrong with one entry line; empty when it can be replayed. */
export function entryProblems(value: unknown): string[] {
  if (!isRecord(value)) return ["an entry must be an object { key, answer }"];
  return [...unknownFields(value, ENTRY_FIELDS, ""), ...keyProblems(value.key), ...resultProblems(value), ...evidenceProblems(value)];
}

/** An entry's identity as far as its author gave it: a missing occurrence means 1. */
export interface EntryIdentity {
  line: number;
  agent: string;
  description: string;
  occurrence: number;
  explicitOccurrence: boolean;
}

/**
 * Entries that would answer the same child because one left out occurrence: which is which is
 * ambiguous, so the later line is a problem. Repeats with explicit occurrences stay as recorded.
 */
export function ambiguousOccurrences(identities: readonly EntryIdentity[]): Map<number, string> {
  const first = new Map<string, EntryIdentity>();
  const problems = new Map<number, string>();
  for (const identity of identities) {
    const id = JSON.stringify([identity.agent, identity.description, identity.occurrence]);
    const earlier = first.get(id);
    if (!earlier) first.set(id, identity);
    else if (!earlier.explicitOccurrence || !identity.explicitOccurrence) {
      problems.set(identity.line, `key.occurrence is needed: line ${earlier.line} has the same agent and description (1 for the first such child, 2 for the next…)`);
    }
  }
  return problems;
}
