// On the dbos backend a workflow's children are named after the first run of its resume chain: a
// resume of a resume finds them, and a nested workflow (which shares its parent's correlation ID)
// never takes the names of its parent's children.
import { expect, test } from "vitest";
import type { RunStore } from "../../src/runs/index.ts";
import { firstOfChain } from "../../src/orchestrator/workflow/resume/chain.ts";
import { sandboxPerTest } from "../runs/helpers.ts";

let store!: RunStore;
sandboxPerTest((_, made) => (store = made));

const workflow = (description: string, task: { parentRunId?: string; resumedFrom?: string; correlationId?: string } = {}) =>
  store.create({ kind: "workflow", task: { description, ...task }, background: false }).view();

test("a resumed workflow's children are named after its chain's first run; a nested one's after its own chain, not its parent's", () => {
  const parent = workflow("parent");
  const nested = workflow("nested", { parentRunId: parent.runId });
  expect(nested.correlationId).toBe(parent.runId); // shared with the parent: hence not the correlation ID

  const parentAgain = workflow("parent", { resumedFrom: parent.runId, correlationId: parent.runId });
  const nestedAgain = workflow("nested", { parentRunId: parentAgain.runId, resumedFrom: nested.runId, correlationId: parent.runId });
  const nestedThird = workflow("nested", { parentRunId: parentAgain.runId, resumedFrom: nestedAgain.runId, correlationId: parent.runId });

  expect(firstOfChain(parent, store)).toBe(parent.runId);
  expect(firstOfChain(parentAgain, store)).toBe(parent.runId);
  expect(firstOfChain(nestedAgain, store)).toBe(nested.runId);
  expect(firstOfChain(nestedThird, store)).toBe(nested.runId);
});

test("a chain whose earlier evidence is gone ends at the earliest run it names", () => {
  const resumed = workflow("resumed", { resumedFrom: "wf_0mx00000a_0000000000" });
  expect(firstOfChain(resumed, store)).toBe("wf_0mx00000a_0000000000");
});

test("a resume of a resume whose earlier runs are another session's (each flow run --resume is a session of its own) is named after the chain's first run", () => {
  // The first two runs of the chain are in other sessions: this store cannot view them.
  const first = "wf_0mx00000a_0000000001";
  const second = "wf_0mx00000b_0000000002";
  const third = workflow("third", { resumedFrom: second, correlationId: first });
  expect(firstOfChain(third, store)).toBe(first);
});
