import { expect, test } from "vitest";
import { TOOL_METADATA } from "../../src/contract/metadata.ts";
import { SteerPayloadSchema } from "../../src/contract/runs-schema.ts";
import { backgroundQueueLimit } from "../../src/orchestrator/child/slots.ts";

test("external_runs' guide names every steer status the schema allows, and no code for an undelivered steer", () => {
  const statuses = (SteerPayloadSchema.properties.status.anyOf as { const: string }[]).map((branch) => branch.const);
  expect(statuses).toEqual(["queued", "terminal", "unsupported", "refused", "not_started"]);
  const guide = TOOL_METADATA.external_runs.semantics.find((line) => line.startsWith("steer "));
  for (const status of statuses) expect(guide).toContain(status);
  expect(guide).not.toContain("run_not_live");
});

test("PI_FLOW_MAX_QUEUED: 500 unless set to a non-negative integer; set but empty is unset, not 0", () => {
  expect(backgroundQueueLimit({})).toBe(500);
  expect(backgroundQueueLimit({ PI_FLOW_MAX_QUEUED: "" })).toBe(500);
  expect(backgroundQueueLimit({ PI_FLOW_MAX_QUEUED: "lots" })).toBe(500);
  expect(backgroundQueueLimit({ PI_FLOW_MAX_QUEUED: "0" })).toBe(0);
  expect(backgroundQueueLimit({ PI_FLOW_MAX_QUEUED: "60" })).toBe(60);
});
