import { describe, expect, test } from "vitest";
import { FlowError } from "../../src/contract/errors.ts";
import { findEntry, nearestKey, OccurrenceCounter, parseCassette, promptHash, type CassetteEntry } from "../../src/harnesses/cassette.ts";
import { resolveHarnessSettings } from "../../src/harnesses/harness-settings.ts";

const header = JSON.stringify({ format: "pi-flow-cassette", version: 1, illustrative: false, note: "test", createdAt: "2026-01-01T00:00:00.000Z" });
const entry = (description: string, occurrence: number, hash: string, answer = "ok"): CassetteEntry => ({
  key: { agent: "role:reviewer", description, occurrence, promptHash: hash },
  outcome: "succeeded",
  answer,
  usage: { turns: 1, toolCalls: 0, inputTokens: 10, outputTokens: 5 },
  timing: { startedAt: "2026-01-01T00:00:00.000Z", durationMs: 3 },
});
const text = (...entries: CassetteEntry[]) => [header, ...entries.map((value) => JSON.stringify(value))].join("\n");

const failure = (run: () => unknown): FlowError => {
  try {
    run();
  } catch (error) {
    if (error instanceof FlowError) return error;
    throw error;
  }
  throw new Error("expected a FlowError");
};

describe("cassettes", () => {
  test("the prompt hash ignores run IDs and ISO times, not anything else, and covers the outputSchema", () => {
    const a = promptHash('evidence {"sourceRunId":"ag_0mx3eeupj_aigx94xa76","capturedAt":"2026-11-30T15:03:51.068Z"}');
    const b = promptHash('evidence {"sourceRunId":"ag_0mx4aaaaa_bbbbbbbbbb","capturedAt":"2027-01-02T03:04:05Z"}');
    expect(a).toMatch(/^sha256:[0-9a-f]{16}$/);
    expect(b).toBe(a);
    expect(promptHash("evidence {}")).not.toBe(a);
    expect(promptHash("same", { type: "object" })).not.toBe(promptHash("same"));
  });

  test("strict matching needs all four key fields; loose ignores the prompt hash", () => {
    const cassette = parseCassette(text(entry("Review tests", 1, "sha256:aaaa"), entry("Review tests", 2, "sha256:bbbb", "second")), "t.jsonl");
    const key = { agent: "role:reviewer", description: "Review tests", occurrence: 2, promptHash: "sha256:cccc" };
    expect(findEntry(cassette, key, "strict")).toBeUndefined();
    expect(findEntry(cassette, key, "loose")?.answer).toBe("second");
    expect(findEntry(cassette, { ...key, promptHash: "sha256:bbbb" }, "strict")?.answer).toBe("second");
    expect(nearestKey(cassette, { ...key, description: "Review test" })).toMatchObject({ description: "Review tests" });
  });

  test("occurrences count per workflow run, agent and description", () => {
    const counter = new OccurrenceCounter();
    const task = { agent: "role:explorer", description: "Map", parentRunId: "wf_a" };
    expect([counter.next(task), counter.next(task), counter.next({ ...task, parentRunId: "wf_b" }), counter.next({ ...task, description: "Other" })]).toEqual([1, 2, 1, 1]);
  });

  test.each([
    ["", /is empty/],
    ['{"format":"other"}', /line 1: the first line is not a pi-flow-cassette header/],
    [header.replace('"version":1', '"version":9'), /line 1: cassette version 9 is not supported/],
    [`${header}\nnot json`, /line 2: not JSON/],
    [`${header}\n${JSON.stringify({ ...entry("x", 1, "h"), outcome: "cancelled" })}`, /line 2: outcome must be succeeded, failed or timed_out/],
    [`${header}\n${JSON.stringify({ ...entry("x", 0, "h") })}`, /line 2: key.occurrence must be a positive integer/],
  ])("a malformed cassette is configuration_invalid naming its line: %j", (source, message) => {
    const error = failure(() => parseCassette(source, "t.jsonl"));
    expect(error.code).toBe("configuration_invalid");
    expect(error.message).toMatch(message);
  });
});

describe("replay and record settings", () => {
  const env = { PI_FLOW_REPLAY: "from-env.jsonl", PI_FLOW_REPLAY_MODE: "loose", PI_FLOW_RECORD: "rec.jsonl" };

  test("the environment turns them on; a Pi setting wins over it; paths are from the project", () => {
    expect(resolveHarnessSettings(undefined, {}, "/p")).toEqual({});
    expect(resolveHarnessSettings(undefined, env, "/p")).toEqual({
      replay: { cassette: "/p/from-env.jsonl", mode: "loose", every: false },
      record: { cassette: "/p/rec.jsonl" },
    });
    expect(resolveHarnessSettings({ replay: { cassette: "/abs/set.jsonl", mode: "strict", every: true } }, env, "/p").replay).toEqual({
      cassette: "/abs/set.jsonl",
      mode: "strict",
      every: true,
    });
  });

  test.each([
    [{ replay: { cassette: 5 } }, {}, /flow.replay.cassette must be a file path/],
    [{ replay: { cassette: "c.jsonl", mode: "fuzzy" } }, {}, /flow.replay.mode must be strict or loose/],
    [undefined, { PI_FLOW_REPLAY: "c.jsonl", PI_FLOW_REPLAY_MODE: "fuzzy" }, /PI_FLOW_REPLAY_MODE must be strict or loose/],
    [{ replay: { cassette: "c.jsonl", every: "yes" } }, {}, /flow.replay.every must be true or false/],
  ])("a malformed value is configuration_invalid: %j %j", (settings, environment, message) => {
    const error = failure(() => resolveHarnessSettings(settings, environment, "/p"));
    expect(error.code).toBe("configuration_invalid");
    expect(error.message).toMatch(message);
  });
});
