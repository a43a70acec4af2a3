// State that must outlive a module: Pi loads an extension with a fresh module graph on every
// reload (and a child session loads its own copy of pi-flow), so a module-level variable would be
// a second, empty copy while runs, sessions and children of the first are still alive. Each such
// store is made here, once per process, under a key listed below with why it must survive. It sits
// in runtime/, the floor src/ stands on, because the runtime's worker pool is such a store too.

/** Every process-wide store, by its global key (Symbol.for), with why it outlives a reload. */
export const PROCESS_GLOBALS = {
  "pi-flow.runs.registry": "live runs and their cancel handles: a reloaded extension must still see, wait on and cancel them",
  "pi-flow.group-commit": "appends waiting to be flushed together: a second copy would split one fsync batch in two",
  "pi-flow.open-sessions": "which sessions this process has open: retention must never prune a live session's runs",
  "pi-flow.session-state": "each session's background runs, slots and pending completions: they belong to the session, not the module",
  "pi-flow.steer.targets": "running children that take steers: a reload keeps a live child steerable",
  "pi-flow.live-progress": "the latest progress of each live run: the widget of a reloaded extension still draws it",
  "pi-flow.launch-pace": "the one chain launches take turns on: every copy shares the same event loop",
  "pi-flow.child-context": "the mark of a child session being built: the copy of pi-flow a child loads must see it and not install itself",
  "pi-flow.project-trust": "trust decisions this process already took: the flow command decides once, with its flags",
  "pi-flow.worktree-queues": "one queue of worktree creations per repository: two copies making worktrees at once would race on git's locks",
  "pi-flow.telemetry": "the one tracer provider and its exporter: spans of every copy go out through one batch, flushed once",
  "pi-flow.cli-process-groups": "live claude and codex children's process groups: the one exit hook kills them all, whichever copy started them",
  "pi-flow.cli-session-starts": "when each live claude and codex child started: the session it leads is ended with it, and a later process reusing its pid is not it, whichever copy started it",
  "pi-flow.cli-exit-hook": "the one process exit hook for CLI children: each copy installing its own added a listener per reload",
  "pi-flow.cli-reaper": "the host's one reaper process, which ends CLI children if the host is killed: a copy of its own per reload was one more process",
  "pi-flow.pi-child-tags": "pi children whose bash commands may still run: the one exit hook kills them all, whichever copy started them",
  "pi-flow.pi-child-sessions": "the sessions live pi children's commands started, and the one spawn watch that records them: a command that drops its child's tag is still found, whichever copy started it",
  "pi-flow.pi-child-exit-hook": "the one process exit hook for pi children's commands: each copy installing its own added a listener per reload",
  "pi-flow.cli-resumed-sessions": "codex threads being continued in place: a reloaded copy must still refuse a second resume of one thread while the first runs",
  "pi-flow.workflow-slots": "the slots foreground workflow roots take: every copy's sandboxes share the process's memory",
  "pi-flow.fleets": "the dbos backend's coordinator per database and the sessions holding it: a reloaded copy would open a second one and never close the first",
  "pi-flow.workflow-workers": "the pool of workflow worker threads, by the bytes of their code: a reloaded copy reuses the idle workers instead of leaving them alive and unreachable",
  "pi-flow.workflow-waits": "the waits workflows' scripts are in: a reloaded copy must still refuse a wait that closes a circle with one a background workflow began before the reload",
  "pi-flow.pattern-checker": "the one worker that checks answers against outputSchemas and args against meta.args, checks outputSchemas themselves, and generates stub values: a copy per reload would start one more thread",
} as const;

export type ProcessGlobalKey = keyof typeof PROCESS_GLOBALS;

/**
 * The process's one value under `key`, made by `make` the first time any copy of pi-flow asks.
 *
 * A store outlives the copy that made it, so a newer copy after an upgrade would be handed the
 * older copy's store: a store whose shape changes (a method added, renamed or answering
 * differently) must say so with a higher `shape`. Each shape is a store of its own (shape 1 sits
 * under the bare key, where copies before shapes put it): the newer copy makes one, and the older
 * copies still alive keep using theirs, which they alone understand. A store that holds a thread
 * or a process passes `retireOlder`: when this shape's store is made, each older shape's store
 * still there is handed to it, so the newer copy can end what the older one would leave idle.
 */
export function processGlobal<T>(key: ProcessGlobalKey, make: () => T, shape = 1, retireOlder?: (older: unknown) => void): T {
  const holder = globalThis as { [symbol: symbol]: unknown };
  const symbol = Symbol.for(storeName(key, shape));
  if (!(symbol in holder)) {
    holder[symbol] = make();
    for (let older = 1; older < shape; older++) {
      const store = holder[Symbol.for(storeName(key, older))];
      if (store !== undefined) retireOlder?.(store);
    }
  }
  // The key and shape name one store, and every copy of this module makes it with the same maker.
  return holder[symbol] as T;
}

/** The global name of one shape of the store under `key`. */
function storeName(key: ProcessGlobalKey, shape: number): string {
  if (!Number.isSafeInteger(shape) || shape < 1) throw new RangeError(`the shape of a process-wide store is a whole number from 1 (${key}: ${shape})`);
  return shape === 1 ? key : `${key}#shape${shape}`;
}
