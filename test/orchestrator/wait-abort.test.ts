import { afterEach, expect, test } from "vitest";
import { ResultOwnership } from "../../src/orchestrator/session/ownership.ts";
import { WAIT_ABORTED, waitForRuns } from "../../src/orchestrator/session/wait.ts";
import { sandbox, type Sandbox } from "../runs/helpers.ts";

let box: Sandbox | undefined;
afterEach(() => box?.cleanup());

test("an aborted wait rejects with an AbortError that says the wait, not the run, was stopped", async () => {
  box = sandbox();
  const store = box.store();
  const writer = store.create({ kind: "agent", background: true, task: { description: "live" } });
  const controller = new AbortController();
  const waiting = waitForRuns(store, new ResultOwnership(() => undefined), { runIds: [writer.runId] }, controller.signal);
  controller.abort();
  const error = await waiting.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(DOMException);
  expect(error).toMatchObject({ name: "AbortError", message: WAIT_ABORTED });
  expect(writer.settled).toBe(false);
  writer.settle({ outcome: "succeeded", value: "done" });
});
