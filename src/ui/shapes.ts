/**
 * Whether `details` read back from a session file have the shape a view draws. A row draws at
 * render time, where a throw is not caught by Pi's fallback and breaks the whole screen; details
 * written by another version, or edited, are treated as absent (the content text is drawn).
 */
import type { ChildEntry } from "../contract/child-entry.ts";
import type { ServedRunView } from "../contract/run-schema.ts";
import type { ChildProgress } from "../harnesses/index.ts";

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

export function isRunView(value: unknown): value is ServedRunView {
  if (!isObject(value)) return false;
  const { runId, kind, task, state, timing, output, refs } = value;
  return typeof runId === "string" && typeof kind === "string" && isObject(task) && isObject(state) && isObject(timing) && isObject(output) && (refs === undefined || isObject(refs));
}

export function isChildEntry(value: unknown): value is ChildEntry {
  return isObject(value) && typeof value.index === "number" && typeof value.description === "string" && typeof value.status === "string";
}

export function isChildProgress(value: unknown): value is ChildProgress {
  return isObject(value) && typeof value.activity === "string" && (value.usage === undefined || isObject(value.usage));
}
