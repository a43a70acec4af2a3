import { AsyncLocalStorage } from "node:async_hooks";
import { processGlobal } from "../../runtime/process-global.ts";

/**
 * Marks the asynchronous branch that builds a child session. Pi loads ambient extensions into
 * children too; while this mark is set, pi-flow's factory must not install itself again. The
 * mark belongs to one async branch only, so unrelated top-level work is never affected.
 */
/**
 * One per process, not per module: Pi loads each extension with a fresh module graph, so the
 * pi-flow a child loads is another copy of this file, and must still see the builder's mark.
 */
function storage(): AsyncLocalStorage<true> {
  return processGlobal("pi-flow.child-context", () => new AsyncLocalStorage<true>());
}
const childContext = storage();

export function inChildSessionContext(): boolean {
  return childContext.getStore() === true;
}

export function runInChildSessionContext<T>(build: () => Promise<T>): Promise<T> {
  return childContext.run(true, build);
}
