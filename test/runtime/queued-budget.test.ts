import { describe, expect, it } from "vitest";
import { QUEUED_BYTES_MAX } from "../../runtime/bridge.ts";
import { run, slowChild, value } from "./support.ts";

const MB = 1000 * 1000;

describe("agent() calls waiting for a concurrency slot have a byte budget on the host", () => {
  it("refuses queued calls past 16 MiB with a catchable hostBytes error, even with hostBytes at its ceiling", async () => {
    const { gate, agent } = slowChild();
    // Sampled as the calls arrive: what the host process holds beyond what it held before.
    const base = process.memoryUsage();
    let peak = 0;
    const sample = () => {
      const now = process.memoryUsage();
      peak = Math.max(peak, now.heapUsed - base.heapUsed + (now.external - base.external));
    };
    const pending = run(
      `export const meta = { limits: { agentCalls: 4096, hostBytes: 268435456, concurrency: 1, cpuMs: 600000 } };
       const calls = [];
       let refusal;
       // One child runs (and waits); the rest queue behind it, 2 MB each as hostBytes counts them.
       for (let i = 0; i < 40; i++) {
         calls.push(agent({ prompt: "x".repeat(${MB}) + i }).then(() => "ran", (e) => { refusal ??= [e.name, e.code, e.message]; return e.code; }));
       }
       await tools.release(); // the host lets the running child finish only now
       const outcomes = await Promise.all(calls);
       return { outcomes, refusal };`,
      { host: { agent, tools: { release: async () => (gate.resolve(), null) } }, onEvent: sample },
    );
    const interval = setInterval(sample, 1);
    const result = value((await pending).result) as { outcomes: string[]; refusal: [string, string, string] };
    clearInterval(interval);
    const ran = result.outcomes.filter((outcome) => outcome === "ran").length;
    // The running call plus what fits the queue's budget (the call that crosses it is refused).
    expect(ran * 2 * MB).toBeLessThanOrEqual(QUEUED_BYTES_MAX + 2 * 2 * MB);
    expect(result.outcomes.filter((outcome) => outcome === "hostBytes")).toHaveLength(40 - ran);
    expect(result.refusal[0]).toBe("RangeError");
    expect(result.refusal[1]).toBe("hostBytes");
    expect(result.refusal[2]).toMatch(/^host memory limit \(268435456\) reached: agent\(\) options would make calls waiting for a concurrency slot hold \d+ bytes \(at most 16777216\)$/);
    expect(peak).toBeLessThan(64 * MB);
  });
});
