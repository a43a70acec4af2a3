import { describe, expect, it } from "vitest";
import { CallQueue, STARTS_PER_TURN } from "../../runtime/queue.ts";

/** Resolves after `count` turns of the event loop, logging "turn" at each. */
function turns(log: string[], count: number): Promise<void> {
  return new Promise((resolve) => {
    const step = (left: number) => {
      if (left === 0) return resolve();
      log.push("turn");
      setImmediate(() => step(left - 1));
    };
    setImmediate(() => step(count));
  });
}

const starts = (log: string[]) => log.filter((entry) => entry.startsWith("start"));

describe("CallQueue", () => {
  it("starts a burst two jobs per turn of the event loop, in order, so the host's other work runs between them", async () => {
    expect(STARTS_PER_TURN).toBe(2);
    const log: string[] = [];
    const queue = new CallQueue(32, () => true);
    for (let i = 0; i < 7; i++) queue.push(() => log.push(`start ${i}`));
    // Two start at once, inside the calls that queued them; the rest in later turns.
    expect(log).toEqual(["start 0", "start 1"]);
    await turns(log, 4);
    expect(log).toEqual(["start 0", "start 1", "start 2", "start 3", "turn", "start 4", "start 5", "turn", "start 6", "turn", "turn"]);
  });

  it("never runs more than its limit; a release starts the next", async () => {
    const log: string[] = [];
    const releases: (() => void)[] = [];
    const queue = new CallQueue(2, () => true);
    for (let i = 0; i < 4; i++)
      queue.push((release) => {
        log.push(`start ${i}`);
        releases.push(release);
      });
    await turns(log, 3);
    expect(starts(log)).toEqual(["start 0", "start 1"]);
    releases[0]!();
    releases[0]!(); // a second release of the same job frees nothing more
    await turns(log, 2);
    expect(starts(log)).toEqual(["start 0", "start 1", "start 2"]);
  });

  it("starts nothing once it is closed", async () => {
    const log: string[] = [];
    let open = true;
    const queue = new CallQueue(8, () => open);
    for (let i = 0; i < 6; i++) queue.push(() => log.push(`start ${i}`));
    open = false;
    await turns(log, 3);
    expect(starts(log)).toEqual(["start 0", "start 1"]);
  });
});
