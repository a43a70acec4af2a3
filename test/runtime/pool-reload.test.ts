// Pi loads the extension afresh on each reload, so the runtime's pool module can exist twice in one
// process. A second copy of the same code must reuse the first copy's idle workers: each copy
// keeping its own pool left the earlier copy's workers running, unreachable, for the life of the
// process. A copy whose code differs (edited, upgraded) must not be handed workers of other code.
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import * as first from "../../runtime/pool.ts";
import { PROJECT_ROOT } from "../support/pi-session.ts";

/** Two workers started by `from`, handed back idle: their thread IDs. */
async function idleThreads(from: typeof first): Promise<number[]> {
  await from.shutdownWorkflowWorkers();
  await from.prewarmWorkflowWorkers(2);
  const started = [await from.acquireWorker(), await from.acquireWorker()];
  for (const pooled of started) from.releaseWorker(pooled, true);
  return started.map((pooled) => pooled.worker.threadId).sort();
}

/** `count` workers taken by `by`, then handed back idle: their thread IDs, in the order taken. */
async function threadsTaken(by: typeof first, count = 2): Promise<number[]> {
  const taken: Awaited<ReturnType<typeof first.acquireWorker>>[] = [];
  for (let i = 0; i < count; i++) taken.push(await by.acquireWorker());
  for (const pooled of taken) by.releaseWorker(pooled, true);
  return taken.map((pooled) => pooled.worker.threadId);
}

test("a second copy of the pool module, as a reload loads it, reuses the idle workers the first copy started", async () => {
  // A module URL with a query is a separate module instance: the copy a reload makes.
  const second = (await import(new URL("../../runtime/pool.ts?reloaded", import.meta.url).href)) as typeof first;
  expect(second).not.toBe(first);
  // No spare warms in the background meanwhile. One an earlier test started may still join the
  // idle list late, at its end: the workers idle now are still the first ones taken.
  const { spare } = first.configureWorkflowWorkers({});
  first.configureWorkflowWorkers({ spare: 0 });
  try {
    await idleThreads(first);
    const idleInFirst = first.idleWorkerThreads();
    expect(idleInFirst.length).toBeGreaterThanOrEqual(2);
    expect(await threadsTaken(second, idleInFirst.length)).toEqual(idleInFirst);
  } finally {
    first.configureWorkflowWorkers({ spare });
  }
});

// Inside the project, so that the copy resolves the project's dependencies.
mkdirSync(join(PROJECT_ROOT, "test-output"), { recursive: true });
const edited = mkdtempSync(join(PROJECT_ROOT, "test-output", "pool-copy-"));

test("a copy whose worker code differs starts workers of its own", async () => {
  for (const folder of ["runtime", "helpers"]) cpSync(join(PROJECT_ROOT, folder), join(edited, folder), { recursive: true });
  appendFileSync(join(edited, "helpers", "retry.ts"), "\n// edited\n");
  const other = (await import(join(edited, "runtime", "pool.ts"))) as typeof first;
  const threads = await idleThreads(first);
  const taken = await threadsTaken(other);
  expect(taken.filter((thread) => threads.includes(thread))).toEqual([]);
  await other.shutdownWorkflowWorkers();
});

afterAll(async () => {
  await first.shutdownWorkflowWorkers();
  rmSync(edited, { recursive: true, force: true });
});
