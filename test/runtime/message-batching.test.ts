import { Worker } from "node:worker_threads";
import { afterEach, expect, it, vi } from "vitest";
import type { AgentOptions } from "../../runtime/index.ts";
import { run, value } from "./support.ts";

afterEach(() => vi.restoreAllMocks());

/**
 * A fan-out's calls and replies cross the thread boundary in batches: a parallel() of many agent()
 * calls that all answer in one turn costs the worker a message or two, not one per child (each
 * message wakes the worker and runs the VM's jobs once). Results and order stay as they were.
 */
it("answers that arrive in one turn go to the worker together, and every agent() still gets its own", async () => {
  const posts = vi.spyOn(Worker.prototype, "postMessage");
  const n = 40;
  const started: string[] = [];
  const { result, events } = await run(
    `const results = await parallel(Array.from({ length: ${n} }, (_, i) => () => agent({ description: "c" + i, prompt: "p" + i })));
     return results.map((r) => r.value);`,
    {
      host: {
        agent: async (options: AgentOptions) => {
          started.push(options.prompt);
          return { runId: `r-${options.prompt}`, output: "", value: options.prompt.toUpperCase() };
        },
      },
      limits: { concurrency: 32, agentCalls: n },
    },
  );
  expect(value(result)).toEqual(Array.from({ length: n }, (_, i) => `P${i}`));
  expect(started).toHaveLength(n);
  expect(events.filter((event) => event.type === "agent_end")).toHaveLength(n);
  const replyMessages = posts.mock.calls.filter(([message]) => ["reply", "replies"].includes((message as { type: string }).type));
  expect(replyMessages.length).toBeLessThan(n / 2);
});
