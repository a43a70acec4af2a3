import { expect, test } from "vitest";
import { reportTracingProblem, telemetryProblems, telemetryStatus } from "../../src/telemetry/tracing.ts";

// Tracing problems are said once each, on flow's stderr and /flow doctor's traces line. Messages a
// collector or the SDK words (an error with a request ID, a span's own words) can be new every time:
// a long session must not keep, or print, every one of them.
test("tracing problems past the first twenty distinct ones are counted, not kept: the list and the doctor line stay bounded", () => {
  const told: string[] = [];
  telemetryProblems((message) => told.push(message));
  for (let index = 0; index < 10_000; index++) reportTracingProblem(`a span could not be recorded: request ${index} failed`);
  reportTracingProblem("a span could not be recorded: request 3 failed"); // said already: not counted again

  const problems = telemetryProblems();
  expect(problems).toHaveLength(21);
  expect(problems.slice(0, 20)).toEqual(Array.from({ length: 20 }, (_, index) => `a span could not be recorded: request ${index} failed`));
  expect(problems[20]).toBe("9980 more telemetry problems were reported and not listed");
  // The listener hears the first twenty, then once that more followed.
  expect(told).toHaveLength(21);
  expect(told[20]).toBe("more telemetry problems followed; only the first 20 are listed");
  const status = telemetryStatus();
  expect(status.length).toBeLessThan(2000);
  expect(status).toMatch(/; 9980 more telemetry problems were reported and not listed$/);
});
