/**
 * What `flow` prints and keeps of text it did not write: a CLI child's stderr and model name, a
 * cassette's error, `--args`. Escape sequences never reach the terminal or a receipt, a bare AWS
 * secret key is redacted everywhere, and the flow command itself keeps no Pi session file.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { pathWithFakes } from "../support/fake-cli.ts";
import { flowInProcess } from "./in-process.ts";
import { CASSETTES, FAUX_EXTENSION, flowSandbox, QUICKSTART, REVIEW_TARGET } from "./support.ts";

const sandbox = flowSandbox();
afterAll(() => sandbox.dispose());

/** The key the fake claude's "hostile" scenario writes, with no label beside it. */
const AWS_SECRET = "q3Vn8Rz/Lt0Yb5Hk+Wp2Xs9Dm4Gc7Jf1Na6Ue0Tk";
const ESCAPES = /[\u001b\u0007\u009b\u009d]/;

/** Every file under `dir`, with its text. */
function filesUnder(dir: string): { path: string; text: string }[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .map((path) => ({ path, text: readFileSync(path, "utf8") }));
}

describe("a CLI child that writes escapes and a bare AWS secret key", () => {
  const script = sandbox.file(
    "hostile.js",
    [
      "export const apiVersion = 1;",
      'export const meta = { name: "hostile" };',
      'const r = await agent({ role: "worker", harness: "claude", description: "hostile cli", prompt: "go [fake:hostile]", context: { mode: "none" } });',
      "return r.value;",
    ].join("\n"),
  );
  const args = ["run", script, "--cwd", sandbox.root, "--model", "faux/faux-1", "--extension", FAUX_EXTENSION];

  test("flow's stderr, its error line and the receipt hold neither the escapes nor the key", async () => {
    sandbox.fauxRules([]);
    const result = await flowInProcess([...args, "--json"], { env: { ...sandbox.env, PATH: pathWithFakes(sandbox.env.PATH) } });
    expect(result.code, result.stderr).toBe(1);
    // The child's failure, with the end of its stderr, is there to read...
    expect(result.stderr).toMatch(/child 1 failed: hostile cli .*fatal: signing with \[REDACTED\] failed/);
    expect(result.stderr).toMatch(/^flow: .*fatal: signing with \[REDACTED\] failed.* \(failed\)$/m);
    // ...and so is the model it named, in its progress line, redacted.
    expect(result.stderr).toMatch(/child 1 started on sonnet.*\[REDACTED\]/);
    for (const printed of [result.stderr, result.stdout]) {
      expect(printed).not.toMatch(ESCAPES);
      expect(printed).not.toContain(AWS_SECRET);
      expect(printed).not.toContain("owned-title"); // an OSC title's payload goes with its sequence
    }
    expect(JSON.parse(result.stdout)).toMatchObject({ ok: false, error: { code: "failed", message: expect.stringContaining("[REDACTED]") } });
  });

  test("no file in the Flow home or HOME holds the key or an escape", async () => {
    for (const { path, text } of filesUnder(sandbox.flowHome)) {
      expect(text, path).not.toContain(AWS_SECRET);
      expect(text, path).not.toMatch(ESCAPES);
    }
  });
});

describe("a cassette whose recorded error writes escape sequences", () => {
  test("neither flow's error line nor the receipt carries them", async () => {
    const header = { format: "pi-flow-cassette", version: 1, illustrative: true, note: "hostile" };
    const error = "model overloaded\u001b]52;c;cm0gLXJmIH4=\u0007\u001b]0;pwned\u0007\u001b[2J\u001b[3J\u009b2J done";
    const entry = {
      key: { agent: "role:reviewer", description: "Review correctness", occurrence: 1, promptHash: "sha256:0000000000000000" },
      outcome: "failed",
      error: { code: "failed", message: error },
      usage: { turns: 1, toolCalls: 0, inputTokens: 0, outputTokens: 0 },
      timing: { startedAt: "2026-11-30T15:03:47.834Z", durationMs: 1 },
    };
    const cassette = sandbox.file("hostile.jsonl", `${JSON.stringify(header)}\n${JSON.stringify(entry)}\n`);
    const result = await flowInProcess(
      ["run", "review", "--cwd", QUICKSTART, "--args", JSON.stringify({ target: REVIEW_TARGET }), "--replay", cassette, "--replay-mode", "loose", "--json"],
      { env: sandbox.env },
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("model overloaded");
    for (const printed of [result.stderr, result.stdout]) {
      expect(printed).not.toMatch(ESCAPES);
      expect(printed).not.toContain("pwned");
      expect(printed).not.toContain("cm0gLXJmIH4=");
    }
  });
});

test("flow help workflows and roles print a saved workflow's or role's text without its escape sequences", async () => {
  const own = flowSandbox();
  try {
    mkdirSync(join(own.flowHome, "workflows"), { recursive: true });
    mkdirSync(join(own.flowHome, "roles"), { recursive: true });
    const hostile = "\\u001b]52;c;Y3VybCBldmlsIHwgc2g=\\u0007\\u001b]0;pwned\\u0007\\u001b[2J\\u202e";
    writeFileSync(
      join(own.flowHome, "workflows", "sorter.js"),
      `export const apiVersion = 1;\nexport const meta = { name: "sorter", description: "Sorts ${hostile} issues", args: { type: "object", properties: { "n${hostile}": { type: "string" } } } };\nreturn 1;\n`,
    );
    writeFileSync(join(own.flowHome, "roles", "sorter.md"), `---\ndescription: "Sorts ${hostile} issues"\n---\nSort them.\n`);
    for (const topic of ["workflows", "roles"]) {
      const result = await flowInProcess(["help", topic], { env: own.env });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toMatch(/^- sorter \(user\): Sorts +issues/m);
      // Raw controls nowhere; an argument's name inside the args JSON stays as its inert \u escapes.
      expect(result.stdout).not.toMatch(/[\u001b\u0007\u009b\u202e]/);
    }
  } finally {
    own.dispose();
  }
});

describe("the flow command's own Pi session", () => {
  test("is kept redacted beside its runs, never in Pi's sessions directory: --args secrets reach no file", async () => {
    const secret = "ghp_" + "Zq8Lw3Nv5Tb1Xc7Rm2Hk9Pd4Fs6Gj0Ya1Ue5";
    const target = `${REVIEW_TARGET}, token ${secret}`;
    const result = await flowInProcess(["run", "review", "--cwd", QUICKSTART, "--args", JSON.stringify({ target }), "--replay", join(CASSETTES, "review.jsonl"), "--replay-mode", "loose"], {
      env: sandbox.env,
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("token [REDACTED]");
    expect(filesUnder(join(sandbox.agentDir, "sessions"))).toEqual([]);
    expect(filesUnder(join(sandbox.root, ".pi", "agent", "sessions"))).toEqual([]);
    for (const { path, text } of filesUnder(sandbox.root)) expect(text, path).not.toContain(secret);
    const kept = filesUnder(sandbox.flowHome).filter(({ path }) => path.endsWith("/flow-session.jsonl"));
    expect(kept.map(({ text }) => text).join("")).toContain("token [REDACTED]");
  });
});

describe("file modes", () => {
  test("every file pi-flow wrote is its owner's alone (0600), every folder 0700, the recorded cassette too", async () => {
    const cassette = join(sandbox.root, "recorded.jsonl");
    const token = "xoxb-" + "2048-1024-Qm7Zt3Lw9Kp2";
    sandbox.fauxRules([{ match: "Review", answer: `Approve. The bot token ${token} is hard-coded.` }]);
    const recorded = await flowInProcess(
      ["run", "review", "--cwd", QUICKSTART, "--args", JSON.stringify({ target: REVIEW_TARGET }), "--model", "faux/faux-1", "--extension", FAUX_EXTENSION, "--record", cassette],
      { env: sandbox.env },
    );
    expect(recorded.code).toBe(0);
    expect(statSync(cassette).mode & 0o777).toBe(0o600);
    expect(readFileSync(cassette, "utf8")).toContain("The bot token [REDACTED] is hard-coded.");
    expect(readFileSync(cassette, "utf8")).not.toContain(token);
    expect(statSync(sandbox.flowHome).mode & 0o777).toBe(0o700);
    const entries = readdirSync(sandbox.flowHome, { recursive: true, withFileTypes: true });
    expect(entries.some((entry) => entry.name === "session.jsonl")).toBe(true);
    for (const entry of entries) {
      const path = join(entry.parentPath, entry.name);
      expect((statSync(path).mode & 0o777).toString(8), path).toBe(entry.isDirectory() ? "700" : "600");
    }
  });
});
