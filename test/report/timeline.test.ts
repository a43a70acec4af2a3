import { expect, test } from "vitest";
import { barOf } from "../../src/report/sections.ts";

const inside = ({ left, width }: { left: number; width: number }) => left >= 0 && width > 0 && left + width <= 100;

test("a run's bar spans its start to its end on the timeline", () => {
  expect(barOf(1_250, 1_750, 1_000, 1_000)).toEqual({ left: 25, width: 50 });
});

test("a run too short to see is drawn at the narrowest width, and still ends inside the timeline when it ends with it", () => {
  // 200 children over a 3 s timeline on a busy machine: the last one takes 2 ms and the workflow ends 1 ms after it.
  const bar = barOf(3_997, 3_999, 1_000, 3_000);
  expect(bar.width).toBeCloseTo(0.4);
  expect(inside(bar)).toBe(true);
  expect(bar.left + bar.width).toBeCloseTo(100);
});

test("an end read a millisecond before its start, or a start at the timeline's very end, keeps the bar inside", () => {
  expect(inside(barOf(1_500, 1_499, 1_000, 1_000))).toBe(true);
  expect(barOf(1_500, 1_499, 1_000, 1_000).left).toBe(50);
  expect(inside(barOf(2_000, 2_000, 1_000, 1_000))).toBe(true);
  expect(inside(barOf(1_000, 1_000, 1_000, 1))).toBe(true);
});
