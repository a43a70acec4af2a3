// Pi loads the extension afresh on each reload, so the CLI harness's modules can exist twice in one
// process. The host's exit must still kill every CLI child's group, through one exit hook and one
// reaper process, not one more of each for every copy that started a child.
import { readdirSync, readFileSync } from "node:fs";
import { expect, test } from "vitest";
import * as first from "../../src/harnesses/cli/process.ts";
import { reaperForget, reaperWatch } from "../../src/harnesses/cli/reaper.ts";

const quick = { command: "sh", args: ["-c", "exit 0"], cwd: process.cwd(), env: process.env, stdin: "", killGraceMs: 1000, maxLineBytes: 1024, maxStderrBytes: 1024, onLine: () => undefined };

test("two copies of the CLI process module, as a reload loads them, share one exit hook", async () => {
  const copy = new URL("../../src/harnesses/cli/process.ts?reloaded", import.meta.url).href;
  const second = (await import(copy)) as typeof first;
  expect(second).not.toBe(first);
  await first.startCliProcess(quick).exited;
  const hooks = process.listenerCount("exit");
  expect((await second.startCliProcess(quick).exited).code).toBe(0);
  expect(process.listenerCount("exit")).toBe(hooks);
});

/** Reaper processes this process started: their parent is this process and they run reaper-process.mjs. */
function reapers(): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === process.pid && readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("reaper-process.mjs");
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number);
}

test("two copies of the reaper module share the host's one reaper process", async () => {
  const copy = new URL("../../src/harnesses/cli/reaper.ts?reloaded", import.meta.url).href;
  const second = (await import(copy)) as typeof import("../../src/harnesses/cli/reaper.ts");
  reaperWatch(2147483646, "first-copy");
  second.reaperWatch(2147483645, "second-copy");
  expect(reapers()).toHaveLength(1);
  reaperForget(2147483646, "first-copy");
  second.reaperForget(2147483645, "second-copy");
});
