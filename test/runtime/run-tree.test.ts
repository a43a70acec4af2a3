// A workflow and the workflows it starts share their root's bounds: calls anywhere in the tree count
// against the root's agentCalls and toolCalls, and nested runs alive at once share one heap budget.
// Nesting is what the orchestrator does: a tools.* host function that runs another workflow, here
// directly through runWorkflow with the root's RunTree.
import { describe, expect, it } from "vitest";
import { NESTED_MEMORY_BYTES, parseWorkflow, RunTree, runWorkflow, type JsonValue, type WorkflowEvent, type WorkflowHost, type WorkflowResult } from "../../runtime/index.ts";
import { deferred, echoAgent, failure, run, value } from "./support.ts";

const MiB = 1024 * 1024;

/** Runs `source` as a nested workflow of `tree`, as tools.external_workflow would. */
function nested(tree: RunTree, source: string, options: { host?: Partial<WorkflowHost>; signal?: AbortSignal; onEvent?: (event: WorkflowEvent) => void } = {}): Promise<WorkflowResult> {
  const workflow = parseWorkflow(source, { origin: "inline" });
  return runWorkflow(workflow, {
    host: { agent: echoAgent, ...options.host },
    tree: { budget: tree, nested: true },
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.onEvent ? { onEvent: options.onEvent } : {}),
  });
}

/** What a nested run's result tells its parent script. */
const outcome = (result: WorkflowResult): JsonValue => (result.ok ? { ok: true } : { ok: false, code: result.error.code ?? null, message: result.error.message, line: result.error.line ?? null });

describe("calls count against the root's limits across the tree", () => {
  it("a nested run's agent() calls use up the root's agentCalls, and the call past them ends the nested run", async () => {
    const tree = new RunTree();
    const child = `for (let i = 0; i < 3; i++) await agent({ prompt: "nested " + i }); return "all three";`;
    const { result } = await run(
      `export const meta = { limits: { agentCalls: 2 } };
       await agent({ prompt: "root" });
       return await tools.nest({});`,
      { tree: { budget: tree, nested: false }, host: { tools: { nest: async () => outcome(await nested(tree, child)) } } },
    );
    // The root made one call and the nested run one more: the tree's two. The nested run's own
    // limit (the default, 32) would have allowed all three.
    // The nested run's refused call is on its first line.
    expect(value(result)).toEqual({ ok: false, code: "agentCalls", message: "agent call limit of the root workflow (2) reached by the workflows of its tree together", line: 1 });
  });

  it("the root's own calls are counted once: a root alone gets exactly its limit", async () => {
    const tree = new RunTree();
    const { result } = await run(
      `export const meta = { limits: { agentCalls: 3, toolCalls: 2 } };
       for (let i = 0; i < 3; i++) await agent({ prompt: "p" + i });
       await tools.noop({}); await tools.noop({});
       return "done";`,
      { tree: { budget: tree, nested: false }, host: { tools: { noop: async () => null } } },
    );
    expect(value(result)).toBe("done");
  });

  it("a nested run's tools.* calls use up the root's toolCalls, the call that started it included", async () => {
    const tree = new RunTree();
    const child = `await tools.noop({}); await tools.noop({}); return "both";`;
    const noop = async () => null;
    const { result } = await run(
      `export const meta = { limits: { toolCalls: 2 } };
       return await tools.nest({});`,
      { tree: { budget: tree, nested: false }, host: { tools: { noop, nest: async () => outcome(await nested(tree, child, { host: { tools: { noop } } })) } } },
    );
    expect(value(result)).toEqual({ ok: false, code: "toolCalls", message: "tool call limit of the root workflow (2) reached by the workflows of its tree together", line: 1 });
  });
});

describe("nested runs share one memory budget", () => {
  const big = (bytes: number, body: string) => `export const meta = { limits: { memoryBytes: ${bytes} } };\n${body}`;
  /** What a run of `memoryBytes` is charged: its worker's cap, 64 MiB of room over its heap. */
  const charge = (memoryBytes: number) => memoryBytes + 64 * MiB;

  it("a nested run that does not fit waits until a sibling settles, then runs", async () => {
    const tree = new RunTree();
    const firstAnswers = deferred<void>();
    const order: string[] = [];
    const first = nested(tree, big(480 * MiB, `return (await agent({ prompt: "first" })).value;`), {
      host: {
        agent: async (options) => {
          order.push("first started");
          await firstAnswers.promise;
          order.push("first answered");
          return echoAgent(options);
        },
      },
    });
    const second = nested(tree, big(480 * MiB, `return (await agent({ prompt: "second" })).value;`), {
      host: {
        agent: async (options) => {
          order.push("second started");
          return echoAgent(options);
        },
      },
      // Its share is not free: the first holds 544 MiB of the tree's 1 GiB.
      onEvent: (event) => {
        if (event.type === "heap_wait") {
          order.push(`second waits for ${event.bytes / MiB} MiB`);
          firstAnswers.resolve();
        }
      },
    });
    expect([value(await first), value(await second)]).toEqual(["did first", "did second"]);
    expect(order).toEqual(["second waits for 544 MiB", "first started", "first answered", "second started"]);
  });

  it("a run stopped while it waits gives up its place, and the runs behind it are not held", async () => {
    const tree = new RunTree();
    const release = deferred<void>();
    const holding = nested(tree, big(480 * MiB, `return (await agent({ prompt: "holds" })).value;`), {
      host: { agent: async (options) => (await release.promise, echoAgent(options)) },
    });
    const stop = new AbortController();
    const waiting = nested(tree, big(480 * MiB, `return "never ran";`), {
      signal: stop.signal,
      onEvent: (event) => event.type === "heap_wait" && stop.abort(),
    });
    expect(failure(await waiting)).toMatchObject({ kind: "aborted" });
    // 480 MiB are free; with the stopped run still first in line, this run would wait behind it.
    const events: WorkflowEvent[] = [];
    const fits = await nested(tree, big(NESTED_MEMORY_BYTES - charge(480 * MiB) - 64 * MiB, `return "ran";`), { onEvent: (event) => events.push(event) });
    expect(value(fits)).toBe("ran");
    expect(events.some((event) => event.type === "heap_wait")).toBe(false);
    release.resolve();
    expect(value(await holding)).toBe("did holds");
  });

  it("a settled run gives its share back: runs at the memory ceiling run one after another without waiting", async () => {
    const tree = new RunTree();
    const events: WorkflowEvent[] = [];
    for (const label of ["one", "two", "three"]) {
      const result = await nested(tree, big(512 * MiB, `return "${label}";`), { onEvent: (event) => events.push(event) });
      expect(value(result)).toBe(label);
    }
    expect(events.some((event) => event.type === "heap_wait")).toBe(false);
  });

  it("small runs are charged their worker's room too, so a tree cannot hold many workers at once", async () => {
    const tree = new RunTree();
    const release = deferred<void>();
    let started = 0;
    let waited = 0;
    const runs = Array.from({ length: 24 }, () =>
      nested(tree, big(4 * MiB, `return (await agent({ prompt: "p" })).value;`), {
        host: { agent: async (options) => (started++, await release.promise, echoAgent(options)) },
        onEvent: (event) => {
          if (event.type === "heap_wait") waited++;
        },
      }),
    );
    // 68 MiB each: fifteen fit in the tree's 1 GiB, and the other nine wait.
    const fitting = Math.floor(NESTED_MEMORY_BYTES / charge(4 * MiB));
    expect([fitting, waited]).toEqual([15, 24 - 15]);
    release.resolve();
    expect((await Promise.all(runs)).map(value)).toEqual(Array(24).fill("did p"));
    expect(started).toBe(24);
  });
});
