import { describe, expect, test } from "vitest";
import { SteerBudget, STEER_LIMITS } from "../../src/orchestrator/child/steer-budget.ts";

/** The steering budget of one run, on a clock the test moves. */

const RUN = "run_20260101T000000Z_steered";

function budgetAt(start = 1_000_000) {
  const clock = { now: start };
  return { clock, budget: new SteerBudget(STEER_LIMITS, () => clock.now) };
}

describe("the steering budget", () => {
  test("unread steers are bounded in count and in bytes; read ones free their place", () => {
    const { budget } = budgetAt();
    const unread = Array.from({ length: STEER_LIMITS.unreadCount }, (_, index) => `steer ${index}`);
    expect(budget.admit(RUN, "one more", unread)).toMatch(/already has 8 steers its child has not read \(at most 8 may wait\)/);
    expect(budget.admit(RUN, "one more", unread.slice(1))).toBeUndefined();
    const big = "é".repeat(30_000); // 60,000 bytes of UTF-8
    const waiting = [big, big, big, big];
    expect(budget.admit(RUN, big, waiting)).toMatch(/unread steers would exceed 256 KiB with this one \(234 KiB wait already\)/);
  });

  test("a minute takes at most windowCount steers; the next minute takes more", () => {
    const { clock, budget } = budgetAt();
    for (let index = 0; index < STEER_LIMITS.windowCount; index++) {
      expect(budget.admit(RUN, `steer ${index}`, [])).toBeUndefined();
      clock.now += 1000;
    }
    expect(budget.admit(RUN, "too soon", [])).toMatch(/at most 30 steers and 1024 KiB of steering per 60 s; it has taken 30 \(0 KiB\)\. Steer again in 30 s\./);
    clock.now += 30_000;
    expect(budget.admit(RUN, "later", [])).toBeUndefined();
  });

  test("a minute takes at most windowBytes of steering", () => {
    const { budget } = budgetAt();
    const chunk = "x".repeat(100 * 1024);
    for (let index = 0; index < 10; index++) expect(budget.admit(RUN, chunk, [])).toBeUndefined();
    expect(budget.admit(RUN, chunk, [])).toMatch(/it has taken 10 \(1000 KiB\)\. Steer again in 60 s\./);
    expect(budget.admit(RUN, "x".repeat(24 * 1024), [])).toBeUndefined();
  });

  test("a run's whole life takes at most totalBytes of steering", () => {
    const { clock, budget } = budgetAt();
    const chunk = "x".repeat(32 * 1024);
    let accepted = 0;
    let refusal: string | undefined;
    // Minute after minute, until the run's total is spent.
    for (let minute = 0; refusal === undefined || !refusal.includes("at most 8192 KiB"); minute++) {
      while ((refusal = budget.admit(RUN, chunk, [])) === undefined) accepted++;
      if (minute === 0) expect(refusal).toMatch(/per 60 s; it has taken 30 \(960 KiB\)/);
      clock.now += STEER_LIMITS.windowMs;
    }
    expect(accepted * chunk.length).toBe(STEER_LIMITS.totalBytes);
    expect(refusal).toMatch(/has taken 8192 KiB of steering, and one run takes at most 8192 KiB\. Cancel it and resume it/);
  });
});
