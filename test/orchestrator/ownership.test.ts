import { describe, expect, test } from "vitest";
import { ResultOwnership } from "../../src/orchestrator/session/ownership.ts";

/** Sends queued notifications only when the test says so, to reproduce races exactly. */
function manualClock() {
  const queue: (() => void)[] = [];
  return { schedule: (send: () => void) => queue.push(send), flush: () => queue.splice(0).forEach((send) => send()) };
}

function tracked() {
  const clock = manualClock();
  const ownership = new ResultOwnership(clock.schedule);
  const sent: string[] = [];
  ownership.track("run_a", () => sent.push("run_a"));
  return { clock, ownership, sent };
}

describe("result ownership", () => {
  test("with no waiter, a settled background run publishes exactly once", () => {
    const { clock, ownership, sent } = tracked();
    ownership.settled("run_a");
    ownership.settled("run_a");
    clock.flush();
    clock.flush();
    expect(sent).toEqual(["run_a"]);
  });

  test("a waiter that observes the settlement consumes the result: no message", () => {
    const { clock, ownership, sent } = tracked();
    const claim = ownership.claim("run_a");
    ownership.settled("run_a");
    claim.observed();
    clock.flush();
    expect(sent).toEqual([]);
    expect(ownership.trackedCount).toBe(0);
  });

  test("a settlement after a waiter consumed the result leaves nothing tracked", () => {
    const { clock, ownership, sent } = tracked();
    const claim = ownership.claim("run_a");
    claim.observed();
    ownership.settled("run_a");
    clock.flush();
    expect(sent).toEqual([]);
    expect(ownership.trackedCount).toBe(0);
  });

  test("17.1: A and B wait, A aborts, the run completes, B returns it: ownership stays claimed, no duplicate", () => {
    const { clock, ownership, sent } = tracked();
    const a = ownership.claim("run_a");
    const b = ownership.claim("run_a");
    a.release();
    clock.flush();
    ownership.settled("run_a");
    clock.flush();
    expect(sent).toEqual([]);
    b.observed();
    clock.flush();
    expect(sent).toEqual([]);
  });

  test("17.1: A and B wait, the run settles, A aborts, B aborts: exactly one notification is recovered", () => {
    const { clock, ownership, sent } = tracked();
    const a = ownership.claim("run_a");
    const b = ownership.claim("run_a");
    ownership.settled("run_a");
    clock.flush();
    a.release();
    clock.flush();
    expect(sent).toEqual([]);
    b.release();
    b.release();
    clock.flush();
    expect(sent).toEqual(["run_a"]);
    const late = ownership.claim("run_a");
    late.release();
    clock.flush();
    expect(sent).toEqual(["run_a"]);
    expect(ownership.trackedCount).toBe(0);
  });

  test("a timer re-checks ownership at send time: a waiter that claims before it fires suppresses it", () => {
    const { clock, ownership, sent } = tracked();
    ownership.settled("run_a");
    const claim = ownership.claim("run_a");
    clock.flush();
    expect(sent).toEqual([]);
    claim.observed();
    clock.flush();
    expect(sent).toEqual([]);
  });

  test("a cancelled wait before settlement loses nothing: the later completion is still pushed", () => {
    const { clock, ownership, sent } = tracked();
    ownership.claim("run_a").release();
    ownership.settled("run_a");
    clock.flush();
    expect(sent).toEqual(["run_a"]);
  });

  test("foreground runs are never tracked, so they never publish", () => {
    const clock = manualClock();
    const ownership = new ResultOwnership(clock.schedule);
    const sent: string[] = [];
    ownership.track("run_bg", () => sent.push("run_bg"));
    ownership.settled("run_fg");
    clock.flush();
    expect(sent).toEqual([]);
  });
});
