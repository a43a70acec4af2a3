import { describe, expect, test } from "vitest";
import { FlowError } from "../../src/contract/errors.ts";
import { assertStrictReplayable, findEntry, nearestKey, OccurrenceCounter, parseCassette, promptHash, type CassetteEntry } from "../../src/harnesses/cassette.ts";
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
    ['{"format":"other"}', /line 1: the first line must be the header \{"format":"pi-flow-cassette","version":1\}/],
    [header.replace('"version":1', '"version":9'), /line 1: cassette version 9 is not supported/],
    [`${header}\nnot json`, /line 2: not JSON/],
    [`${header}\n${JSON.stringify({ ...entry("x", 1, "h"), outcome: "cancelled" })}`, /line 2: outcome must be succeeded, failed, timed_out/],
    [`${header}\n${JSON.stringify({ ...entry("x", 0, "h") })}`, /line 2: key.occurrence must be a positive integer/],
  ])("a malformed cassette is configuration_invalid naming its line: %j", (source, message) => {
    const error = failure(() => parseCassette(source, "t.jsonl"));
    expect(error.code).toBe("configuration_invalid");
    expect(error.message).toMatch(message);
  });

  test("a hand-written cassette needs only format and version, and per entry agent, description and answer", () => {
    const written = [
      '{"format":"pi-flow-cassette","version":1}',
      '{"key":{"agent":"role:reviewer","description":"Review tests"},"answer":"looks fine"}',
      '{"key":{"agent":"role:reviewer","description":"Review tests","occurrence":2},"answer":{"verdict":"pass"}}',
    ].join("\n");
    const cassette = parseCassette(written, "hand.jsonl");
    const key = { agent: "role:reviewer", description: "Review tests", occurrence: 1, promptHash: "sha256:0123456789abcdef" };
    expect(findEntry(cassette, key, "loose")).toMatchObject({ outcome: "succeeded", answer: "looks fine" });
    expect(findEntry(cassette, { ...key, occurrence: 2 }, "loose")?.answer).toEqual({ verdict: "pass" });
    // Strict replay matches prompts, which a hand-written entry does not name.
    expect(findEntry(cassette, key, "strict")).toBeUndefined();
    const strict = failure(() => assertStrictReplayable(cassette, "hand.jsonl"));
    expect(strict.message).toMatch(/line 2: key.promptHash is needed in strict replay .*--replay-mode loose/);
    expect(strict.message).toMatch(/line 3: key.promptHash/);
  });

  test("every bad line is named at once, each with all that is wrong with it", () => {
    const written = [
      '{"format":"pi-flow-cassette","version":1,"note":"three mistakes"}',
      '{"key":{"agent":"role:reviewer","description":"Fine"},"answer":"ok"}',
      '{"key":{"agent":"role:reviewer"},"anwser":"typo"}',
      "{not json",
      '{"key":{"agent":"role:reviewer","description":"Fine"},"answer":"again","usage":{"turns":-1}}',
    ].join("\n");
    const error = failure(() => parseCassette(written, "bad.jsonl"));
    expect(error.code).toBe("configuration_invalid");
    expect(error.message.split("\n")).toEqual([
      'Cassette bad.jsonl has 3 bad lines (see docs/cli.md, "Cassettes"):',
      expect.stringMatching(/^  line 3: unknown field "anwser" .*; key.description must be a string; answer is missing/),
      "  line 4: not JSON",
      expect.stringMatching(/^  line 5: usage must be an object of counts/),
    ]);
  });

  test("a usage whose cost or cache counts are not numbers is a bad line, not a replayed run's usage", () => {
    for (const usage of ['{"turns":1,"costUsd":"<b>1</b>"}', '{"costUsd":-1}', '{"cacheReadTokens":"many"}']) {
      const written = ['{"format":"pi-flow-cassette","version":1}', `{"key":{"agent":"role:reviewer","description":"Fine"},"answer":"ok","usage":${usage}}`].join("\n");
      const error = failure(() => parseCassette(written, "cost.jsonl"));
      expect(error.message.split("\n")[1]).toMatch(/^  line 2: usage must be an object of counts/);
    }
    const recorded = ['{"format":"pi-flow-cassette","version":1}', '{"key":{"agent":"role:reviewer","description":"Fine"},"answer":"ok","usage":{"turns":1,"cacheReadTokens":10,"costUsd":0.0125}}'].join("\n");
    expect(() => parseCassette(recorded, "recorded.jsonl")).not.toThrow();
  });

  test("an entry that leaves out occurrence may not repeat another's agent and description", () => {
    const written = [
      '{"format":"pi-flow-cassette","version":1}',
      '{"key":{"agent":"role:worker","description":"Fix"},"answer":"first"}',
      '{"key":{"agent":"role:worker","description":"Fix","occurrence":2},"answer":"second"}',
      '{"key":{"agent":"role:worker","description":"Fix"},"answer":"which?"}',
    ].join("\n");
    expect(failure(() => parseCassette(written, "t.jsonl")).message).toMatch(/has 1 bad line .*\n  line 4: key.occurrence is needed: line 2 has the same agent and description/s);
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

  test("flow.stub stubs every child unless every is false; its seed defaults to 0", () => {
    expect(resolveHarnessSettings({ stub: true }, {}, "/p").stub).toEqual({ seed: 0, every: true });
    expect(resolveHarnessSettings({ stub: { seed: 7 } }, {}, "/p").stub).toEqual({ seed: 7, every: true });
    expect(resolveHarnessSettings({ stub: { every: false } }, {}, "/p").stub).toEqual({ seed: 0, every: false });
  });

  test.each([
    [{ replay: { cassette: 5 } }, {}, /flow.replay.cassette must be a file path/],
    [{ replay: { cassette: "c.jsonl", mode: "fuzzy" } }, {}, /flow.replay.mode must be strict or loose/],
    [undefined, { PI_FLOW_REPLAY: "c.jsonl", PI_FLOW_REPLAY_MODE: "fuzzy" }, /PI_FLOW_REPLAY_MODE must be strict or loose/],
    [{ replay: { cassette: "c.jsonl", every: "yes" } }, {}, /flow.replay.every must be true or false/],
    [{ stub: { seed: -1 } }, {}, /flow.stub.seed must be a non-negative integer \(see docs\/cli.md, "The stub harness"\)/],
    [{ stub: "on" }, {}, /flow.stub must be true or \{ seed, every \}/],
  ])("a malformed value is configuration_invalid: %j %j", (settings, environment, message) => {
    const error = failure(() => resolveHarnessSettings(settings, environment, "/p"));
    expect(error.code).toBe("configuration_invalid");
    expect(error.message).toMatch(message);
  });
});
