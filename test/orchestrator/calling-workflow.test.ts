// A tools.* call runs inside its workflow's async context, and what the call leaves behind keeps
// that context: a background delegation's settle, and the parent turn its delivery triggers. A
// delegation the parent's model makes in that later turn is not the workflow's child.
import { expect, test } from "vitest";
import { RunTree } from "../../runtime/index.ts";
import { bindWorkflowTools, callingWorkflowRun, inheritedParentTools, nextWorkflowPlace } from "../../src/orchestrator/workflow/index.ts";

test("a continuation a tools.* call left behind is outside the workflow once the call has returned", async () => {
  let later: Promise<{ run: string | undefined; tools: readonly string[] | undefined; depth: number }> | undefined;
  const during: { run?: string | undefined } = {};
  const ctx = {
    tools: [],
    // Stands in for Pi's executeTool: a background delegation answers at once and settles later.
    executeTool: async () => {
      during.run = callingWorkflowRun();
      later = new Promise((resolve) => setImmediate(() => resolve({ run: callingWorkflowRun(), tools: inheritedParentTools(), depth: nextWorkflowPlace().depth })));
      return { result: { content: [{ type: "text", text: "accepted" }] }, isError: false };
    },
  } as unknown as Parameters<typeof bindWorkflowTools>[1];
  const tools = bindWorkflowTools(["external_delegate"], ctx, { depth: 1, runId: "wf_0mx5test0_0000000001", snapshot: { messages: [] } as never, parentTools: ["read"], callableTools: ["read"], tree: new RunTree() }, []);
  await tools.external_delegate!({}, { signal: new AbortController().signal, index: 0 });
  expect(during.run).toBe("wf_0mx5test0_0000000001");
  expect(await later).toEqual({ run: undefined, tools: undefined, depth: 1 });
});
