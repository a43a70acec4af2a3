import { getAgentDir } from "@earendil-works/pi-coding-agent";
import { FlowError } from "../contract/errors.ts";
import type { RunView } from "../contract/run-schema.ts";
import { assertRunId, openRunStore, projectSessionKeys, resolveFlowHome, type RunStore, type SinglePayload } from "../runs/index.ts";

/** The Flow home the `flow` command reads and writes: PI_FLOW_HOME, else below Pi's agent directory. */
export const flowHome = (): string => resolveFlowHome(process.env, getAgentDir());

/** The run store of one session of the project at `cwd`. */
export const sessionStore = (cwd: string, sessionId: string): RunStore => openRunStore({ home: flowHome(), cwd, sessionId });

/** One store per session that has runs in this project, read-only use. */
export function projectStores(cwd: string): RunStore[] {
  return projectSessionKeys(flowHome(), cwd).map((key) => sessionStore(cwd, key));
}

/** A run of the project and the store of the session that holds it. */
interface ProjectRun {
  view: RunView;
  store: RunStore;
}

/** Every run of the project, from every session, newest first. */
export function listProjectRuns(cwd: string): ProjectRun[] {
  const rows: ProjectRun[] = [];
  for (const store of projectStores(cwd)) {
    for (const view of store.listEvery()) rows.push({ view, store });
  }
  return rows.sort((a, b) => b.view.timing.startedAt.localeCompare(a.view.timing.startedAt) || b.view.runId.localeCompare(a.view.runId));
}

/** The store of the session that holds `runId`; run_unavailable when no session of this project does. */
export function storeOfRun(cwd: string, runId: string): RunStore {
  const id = assertRunId(runId);
  for (const store of projectStores(cwd)) {
    try {
      store.view(id);
      return store;
    } catch (error) {
      if (!(error instanceof FlowError && error.code === "run_unavailable")) throw error;
    }
  }
  throw new FlowError("run_unavailable", `Run ${id} is not a run of this project (${cwd}): unknown, or pruned. flow runs lists this project's runs; --cwd names another project.`);
}

/** Whether a workflow's script wrote to its output (console.log, text()), which flow run does not print: its first page holds an entry. */
export function scriptWroteOutput(cwd: string, runId: string): boolean {
  try {
    return /^\[\s*\{/.test(storeOfRun(cwd, runId).inspectSingle(runId, "output", { limitBytes: 1024 }).page.text);
  } catch {
    return false; // only a hint: evidence that cannot be read (a full disk cut it short) must not fail a run that ended
  }
}

/** One view of a run, paged through to its end: the concatenated page text and its encoding. */
/**
 * One view's pages, in order, yielding to the event loop between pages: a long view never keeps
 * a signal (SIGTERM, Ctrl-C) from being handled, and each page can be written before the next is read.
 */
export async function* viewPages(store: RunStore, runId: string, view: string): AsyncGenerator<SinglePayload> {
  let cursor: string | undefined;
  do {
    const payload = store.inspectSingle(runId, view, { limitBytes: 256 * 1024, ...(cursor ? { cursor } : {}) });
    yield payload;
    cursor = payload.page.nextCursor;
    if (cursor) await new Promise((resolve) => setImmediate(resolve));
  } while (cursor);
}

export function readWholeView(store: RunStore, runId: string, view: string): { text: string; encoding: string; finalAvailable: boolean } {
  let cursor: string | undefined;
  let text = "";
  let encoding = "text";
  let finalAvailable = false;
  do {
    const payload = store.inspectSingle(runId, view, { limitBytes: 256 * 1024, ...(cursor ? { cursor } : {}) });
    text += payload.page.text;
    encoding = payload.page.encoding;
    finalAvailable = payload.finalAvailable ?? false;
    cursor = payload.page.nextCursor;
  } while (cursor);
  return { text, encoding, finalAvailable };
}

/** A settled workflow's whole value, also when its receipt could only point to it. */
export function readWorkflowValue(store: RunStore, runId: string): unknown {
  const { text } = readWholeView(store, runId, "final");
  return (JSON.parse(text) as { result?: unknown }).result;
}
