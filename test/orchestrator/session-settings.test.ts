import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { harnessStateIn, settingValue, type FlowSettingsInput } from "../../src/orchestrator/session/index.ts";
import { readSessionSettings } from "../../src/orchestrator/session/session-settings.ts";

/**
 * A session's settings are one value read as it binds: a setting or trust store that cannot be
 * read does not stop the session from starting; every use of it reports configuration_invalid,
 * and help says why. Real files: Pi's agent directory, its trust store, a project with role files.
 */
let root: string;
let project: string;
const saved = { agentDir: process.env.PI_CODING_AGENT_DIR, home: process.env.PI_FLOW_HOME };
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "pi-flow-settings-"));
  project = join(root, "project");
  mkdirSync(join(project, ".pi", "flow", "roles"), { recursive: true });
  mkdirSync(join(root, "agent"));
  process.env.PI_CODING_AGENT_DIR = join(root, "agent");
  process.env.PI_FLOW_HOME = join(root, "home");
});
afterAll(() => {
  for (const [key, value] of [["PI_CODING_AGENT_DIR", saved.agentDir], ["PI_FLOW_HOME", saved.home]] as const) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
  rmSync(root, { recursive: true, force: true });
});

const read = (flow: FlowSettingsInput) => readSessionSettings({ getSettings: () => ({ flow }) as never }, { cwd: project, isProjectTrusted: () => true });

test("a malformed replay setting and an unreadable trust store are kept as their errors: the session starts, each use is configuration_invalid", async () => {
  writeFileSync(join(root, "agent", "trust.json"), "{ not json");
  const settings = read({ replay: { cassette: "c.jsonl", mode: "fuzzy" } });
  expect(settings.flowHome).toBe(join(root, "home"));
  expect(() => settingValue(settings.harnesses)).toThrow(expect.objectContaining({ code: "configuration_invalid", message: expect.stringContaining("flow.replay.mode must be strict or loose") }));
  expect(() => settingValue(settings.projectTrusted)).toThrow(expect.objectContaining({ code: "configuration_invalid", message: expect.stringContaining("trust store") }));
  expect(await harnessStateIn(settings, "replay")).toMatchObject({ available: false, detail: expect.stringContaining("flow.replay.mode") });
});

test("the value is frozen and is Pi's settings as they were: a change to either afterwards is not seen", () => {
  writeFileSync(join(root, "agent", "trust.json"), JSON.stringify({ [project]: true }));
  const flow: FlowSettingsInput = { replay: { cassette: "c.jsonl" } };
  const settings = read(flow);
  flow.replay!.cassette = "other.jsonl";
  writeFileSync(join(root, "agent", "trust.json"), JSON.stringify({ [project]: false }));
  expect(settingValue(settings.harnesses).replay?.cassette).toBe(join(project, "c.jsonl"));
  expect(settingValue(settings.projectTrusted)).toBe(true);
  expect(() => ((settings.flow.replay as { cassette?: unknown }).cassette = "x")).toThrow(TypeError);
  expect(read(flow).projectTrusted).toEqual({ ok: true, value: false });
});

test("flow.isolation's caps on a worktree child's kept changes: a setting wins over the environment, either falls back to the default, and a malformed one is configuration_invalid", () => {
  const readWith = (flow: FlowSettingsInput, env: Record<string, string>) => {
    const before = { ...process.env };
    Object.assign(process.env, env);
    try {
      return read(flow).keptChangesMax;
    } finally {
      for (const key of Object.keys(env)) if (before[key] === undefined) delete process.env[key];
    }
  };
  expect(settingValue(readWith({}, {}))).toEqual({ bytes: 1024 ** 3, files: 100_000 });
  expect(settingValue(readWith({ isolation: { maxKeptFiles: 30 } }, { PI_FLOW_MAX_KEPT_FILES: "20", PI_FLOW_MAX_KEPT_BYTES: "4096" }))).toEqual({ bytes: 4096, files: 30 });
  for (const [flow, env, named] of [
    [{ isolation: { maxKeptBytes: 0 } }, {}, "flow.isolation.maxKeptBytes must be a whole number of bytes, 1 or more, not 0"],
    [{ isolation: { maxKeptFiles: "lots" } }, {}, 'flow.isolation.maxKeptFiles must be a whole number of files, 1 or more, not "lots"'],
    [{ isolation: { maxKeptBytes: 1.5 } }, {}, "flow.isolation.maxKeptBytes must be a whole number"],
    [{ isolation: "small" }, {}, "flow.isolation must be an object"],
    [{}, { PI_FLOW_MAX_KEPT_BYTES: "2GiB" }, 'PI_FLOW_MAX_KEPT_BYTES must be a whole number of bytes, 1 or more, not "2GiB"'],
  ] as [FlowSettingsInput, Record<string, string>, string][]) {
    const setting = readWith(flow, env);
    expect(() => settingValue(setting)).toThrow(expect.objectContaining({ code: "configuration_invalid", message: expect.stringContaining(named) }));
  }
});
