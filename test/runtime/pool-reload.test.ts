// Pi loads the extension afresh on each reload, so the runtime's pool module can exist twice in one
// process. The second copy must reuse the first copy's idle workers: each copy keeping its own
// pool left the earlier copy's workers running, unreachable, for the life of the process.
import { afterAll, expect, test } from "vitest";
import * as first from "../../runtime/pool.ts";

test("a second copy of the pool module, as a reload loads it, reuses the idle workers the first copy started", async () => {
  // A module URL with a query is a separate module instance: the copy a reload makes.
  const copy = new URL("../../runtime/pool.ts?reloaded", import.meta.url).href;
  const second = (await import(copy)) as typeof first;
  expect(second).not.toBe(first);
  await first.shutdownWorkflowWorkers();
  await first.prewarmWorkflowWorkers(2);
  const started = [await first.acquireWorker(), await first.acquireWorker()];
  const threads = started.map((pooled) => pooled.worker.threadId);
  for (const pooled of started) first.releaseWorker(pooled, true);

  const reused = [await second.acquireWorker(), await second.acquireWorker()];
  expect(reused.map((pooled) => pooled.worker.threadId).sort()).toEqual([...threads].sort());
  for (const pooled of reused) second.releaseWorker(pooled, true);
});

afterAll(() => first.shutdownWorkflowWorkers());
