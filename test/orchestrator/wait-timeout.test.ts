// A wait's timeoutMs is the model's to choose: one past what Node's timers take (2^31 - 1 ms,
// about 24.8 days) still waits that long, rather than returning at once with the runs pending.
import { afterEach, expect, test, vi } from "vitest";
import { longTimeout } from "../../src/orchestrator/session/wait.ts";

afterEach(() => {
  vi.useRealTimers();
});

test("a timeout past 2^31 ms fires when it is due, not at once", () => {
  vi.useFakeTimers();
  let fired = 0;
  longTimeout(() => fired++, 2 ** 32 + 5);
  vi.advanceTimersByTime(2 ** 31);
  expect(fired).toBe(0);
  vi.advanceTimersByTime(2 ** 32 - 2 ** 31);
  expect(fired).toBe(0);
  vi.advanceTimersByTime(5);
  expect(fired).toBe(1);
});

test("a cleared long timeout never fires, whichever step it was in", () => {
  vi.useFakeTimers();
  let fired = 0;
  const timer = longTimeout(() => fired++, 2 ** 31 + 10);
  vi.advanceTimersByTime(2 ** 31);
  timer.clear();
  vi.advanceTimersByTime(2 ** 32);
  expect(fired).toBe(0);
});
