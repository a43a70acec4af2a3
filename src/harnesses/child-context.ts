import { AsyncLocalStorage } from "node:async_hooks";

/**
 * Marks the asynchronous branch that builds a child session. Pi loads ambient extensions into
 * children too; while this mark is set, pi-flow's factory must not install itself again. The
 * mark belongs to one async branch only, so unrelated top-level work is never affected.
 */
const childContext = new AsyncLocalStorage<true>();

export function inChildSessionContext(): boolean {
  return childContext.getStore() === true;
}

export function runInChildSessionContext<T>(build: () => Promise<T>): Promise<T> {
  return childContext.run(true, build);
}
