import { redactText } from "../../runs/index.ts";
import type { ChildUsage } from "../types.ts";
import { withoutLastPiece } from "./bounded-text.ts";
import { StreamFormatError } from "./types.ts";

/** Run-time checks on events read from a CLI's stream: a cast is never trusted across a process. */

export type JsonRecord = Record<string, unknown>;

export const isRecord = (value: unknown): value is JsonRecord =>
  value !== null && typeof value === "object" && !Array.isArray(value);

export const text = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

/** The longest id or name (of a message, tool call, item, session or tool) a stream may use. */
export const MAX_NAME_CHARS = 256;

/**
 * An id or a tool's name, or undefined when the field is not a string. A reader keeps these for
 * the whole run (to count each call and turn once), so one longer than any CLI writes is
 * malformed rather than held: a stream of huge ids cannot grow the host's memory without bound.
 */
export function shortText(value: unknown, what: string): string | undefined {
  const found = text(value);
  if (found !== undefined && found.length > MAX_NAME_CHARS) throw new StreamFormatError(`${what} is longer than ${MAX_NAME_CHARS} characters`);
  return found;
}

/**
 * The most ids (tool calls still running, items not completed, recent responses) a reader holds.
 * A reader forgets an id once its call or item has ended; a stream that names ids and never ends
 * them would otherwise grow the host's memory with every one. Past this the oldest are forgotten:
 * a late event of a forgotten call counts as another call, which errs toward a quota's side.
 */
export const MAX_HELD_IDS = 4096;

/** Forgets the oldest entries (by insertion) of `held` past `max`. */
export function forgetOldest(held: Map<string, unknown> | Set<string>, max = MAX_HELD_IDS): void {
  for (const key of held.keys()) {
    if (held.size <= max) return;
    held.delete(key);
  }
}

/** A token or turn count: a whole number from 0 up; anything else (a string, 1.5, 1e308) counts 0, so no sum becomes Infinity. */
export const count = (value: unknown): number => (typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : 0);

/**
 * `count` for one run's stream, saying once (through `note`) that a count was there but was not a
 * whole number from 0 up: the run's usage then undercounts, and its evidence says why.
 */
export function counter(harness: string, note: (message: string) => void): (value: unknown) => number {
  let noted = false;
  return (value) => {
    const counted = count(value);
    if (counted === 0 && value !== undefined && value !== null && value !== 0 && !noted) {
      noted = true;
      const shown = typeof value === "number" || typeof value === "string" ? JSON.stringify(value).slice(0, 40) : typeof value;
      note(`${harness} reported a token or turn count that is not a whole number from 0 up (${shown}); it counts 0`);
    }
    return counted;
  };
}

/** The usage's counts as the contract has them, whole numbers: a sum past the largest safe integer stops there. */
export function keepCountsWhole(usage: ChildUsage): void {
  for (const key of ["turns", "toolCalls", "inputTokens", "outputTokens"] as const) {
    if (!Number.isSafeInteger(usage[key])) usage[key] = usage[key] > 0 ? Number.MAX_SAFE_INTEGER : 0;
  }
}

/** A field that the format requires to be an object. */
export function requireRecord(value: unknown, what: string): JsonRecord {
  if (!isRecord(value)) throw new StreamFormatError(`${what} is not an object`);
  return value;
}

/** A field that the format requires to be an array. */
export function requireArray(value: unknown, what: string): unknown[] {
  if (!Array.isArray(value)) throw new StreamFormatError(`${what} is not an array`);
  return value;
}

/**
 * How far past what is shown redaction looks. Redacting a whole 16 MiB tool input (a file a child
 * writes) holds the host for seconds; the rules need only the text around what is shown.
 */
const REDACTION_WINDOW = 64 * 1024;

/**
 * The first `max` characters of `text`, redacted before they are cut: redaction sees the window
 * after them too, less the word the window's end goes through, so no secret is cut into a piece
 * no rule knows (a private key that runs past the window is redacted to the window's end).
 */
export function redactedStart(text: string, max: number): string {
  const window = text.length <= max + REDACTION_WINDOW ? text : withoutLastPiece(text.slice(0, max + REDACTION_WINDOW));
  return redactText(window).text.slice(0, max);
}

/** The longest error text a stream's event gives the run (its error, a diagnostic); the run writer keeps 8 KiB of an error. */
const MAX_MESSAGE_CHARS = 8 * 1024;

/**
 * An error text from the stream, or undefined when the field is not a string: its first 8 KiB,
 * redacted before the cut, so the run does not carry (or redact, at every write) megabytes of it.
 */
export function messageText(value: unknown): string | undefined {
  const said = text(value);
  if (said === undefined || said.length <= MAX_MESSAGE_CHARS) return said;
  return `${redactedStart(said, MAX_MESSAGE_CHARS)}… (more than ${MAX_MESSAGE_CHARS} chars)`;
}

/**
 * Tool arguments as one bounded line for the diagnostics log, redacted before it is cut. Each
 * string is serialized up to what could be shown or redacted with it: escaping a 16 MiB file's
 * text as JSON alone held the host for half a second, to keep 2000 characters of it.
 */
export function argsLine(value: unknown, max = 2000): string {
  const limit = max + REDACTION_WINDOW;
  const line =
    typeof value === "string"
      ? value
      : (JSON.stringify(value ?? {}, (_key, field: unknown) => (typeof field === "string" && field.length > limit ? field.slice(0, limit) : field)) ?? "");
  const shown = redactedStart(line, max + 1);
  return shown.length <= max ? shown : `${shown.slice(0, max)}… (more than ${max} chars)`;
}
