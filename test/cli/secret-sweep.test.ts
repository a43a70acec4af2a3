/**
 * Nothing pi-flow writes keeps a secret. A real `flow` process runs a workflow fed a corpus of
 * realistic FAKE secrets through `--args`: a pi child (Pi's faux model) gets them in its prompt,
 * passes them to a tool and repeats them in its answer, then is resumed; claude children (the
 * fake CLI) repeat them in answers written in 37-byte pieces, in labels cut from their prompts, and
 * on the stderr of a CLI that dies; the script stores one under a secret name and returns them as
 * object keys. Afterwards every file under the Flow home and the temporary HOME is read, and none
 * holds any 8-character piece of any secret.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { buildSecretCases, type SecretCase } from "../runs/fixtures/secret-corpus.ts";
import { pathWithFakes } from "../support/fake-cli.ts";
import { FAUX_EXTENSION, flow, flowSandbox, type FlowResult } from "./support.ts";

const sandbox = flowSandbox();
/** Inputs the test writes (the faux model's script holds the secrets) and the children's project: outside HOME. */
const outside = mkdtempSync(join(tmpdir(), "pi-flow-sweep-inputs-"));
afterAll(() => {
  sandbox.dispose();
  rmSync(outside, { recursive: true, force: true });
});

const ALL = buildSecretCases();
/** A spread of the corpus for the pi child, shortest first (the faux log keeps a request's first 300 characters). */
const CONFIGS = ALL.filter((_, i) => i % 5 === 0).sort((a, b) => a.text.length - b.text.length);
/** One-line cases for the claude children: the fake answers with its prompt's last line. */
const LINES = ALL.filter((c, i) => i % 5 === 2 && !c.text.includes("\n")).slice(0, 12);
/** A value no rule finds a secret in by itself: only the secret name it is stored under says it is one. */
const STORED: SecretCase = { provider: "store-key", context: "store(\"db_password\")", text: "correct-horse-battery-staple-7193", secret: "correct-horse-battery-staple-7193" };
const FED: readonly SecretCase[] = [...CONFIGS, ...LINES, STORED];
/** Everything around the secrets: a piece found there proves nothing. */
const CONTEXT = FED.map((c) => c.text.split(c.secret).join("\u0000")).join("\u0000");

const SCRIPT = [
  "export const apiVersion = 1;",
  'export const meta = { name: "sweep" };',
  'const first = await agent({ role: "worker", description: "check configs", prompt: "Check these configs:\\n\\n" + args.configs.join("\\n\\n"), context: { mode: "none" } });',
  'const again = await agent({ role: "worker", resume: first.runId, description: "follow up", prompt: "What did you find?", context: { mode: "none" } });',
  "const cli = [];",
  // No description: each child's label is its prompt's start, cut at 60 characters.
  'for (const line of args.lines) cli.push((await agent({ role: "worker", harness: "claude", prompt: "Repeat this line:\\n" + line, context: { mode: "none" } })).value);',
  // Children whose CLI dies with the line on stderr, followed by a stack trace.
  "const failed = [];",
  'for (const line of args.lines) { try { await agent({ role: "worker", harness: "claude", prompt: "[fake:crash-echo]\\nRepeat this line:\\n" + line, context: { mode: "none" } }); } catch (error) { failed.push(String(error.code)); } }',
  'store("db_password", args.password);',
  // Secrets as the keys of the returned value.
  "const byKey = {};",
  'for (const line of args.lines) byKey[line] = "owner";',
  "return { first: first.value, again: again.value, cli, failed, byKey };",
].join("\n");

/** The 8-character pieces of `secret` (the whole of a shorter one) that its context does not hold. */
function pieces(secret: string): string[] {
  const width = Math.min(8, secret.length);
  const out: string[] = [];
  for (let at = 0; at + width <= secret.length; at++) {
    const piece = secret.slice(at, at + width);
    if (!CONTEXT.includes(piece)) out.push(piece);
  }
  return out;
}

/** A file's text as written, plus every string of its JSON lines decoded (a secret may sit escaped). */
function readable(path: string): string {
  const text = readFileSync(path, "utf8");
  const strings: string[] = [];
  const collect = (value: unknown): void => {
    if (typeof value === "string") strings.push(value);
    else if (Array.isArray(value)) value.forEach(collect);
    else if (value !== null && typeof value === "object") Object.values(value).forEach(collect);
  };
  for (const line of text.split("\n")) {
    try {
      collect(JSON.parse(line));
    } catch {
      // Not a JSON line: the raw text is checked.
    }
  }
  return [text, ...strings].join("\n");
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

let result: FlowResult;
const fauxLog = join(outside, "requests.log");
beforeAll(async () => {
  const rules = join(outside, "faux-rules.json");
  // The pi child passes every config to bash, then repeats them all in its answer.
  const all = CONFIGS.map((c) => c.text).join("\n\n");
  const command = `cat > /dev/null <<'CONFIGS_END'\n${all}\nCONFIGS_END\necho checked`;
  writeFileSync(rules, JSON.stringify({ rules: [{ match: "Check these configs", tool: { name: "bash", arguments: { command } }, then: `Checked. They hold:\n\n${all}` }] }));
  const script = join(outside, "sweep.js");
  writeFileSync(script, SCRIPT);
  const env = { ...sandbox.env, PATH: pathWithFakes(sandbox.env.PATH), FLOW_FAUX_SCRIPT: rules, FLOW_FAUX_LOG: fauxLog };
  const args = JSON.stringify({ configs: CONFIGS.map((c) => c.text), lines: LINES.map((c) => c.text), password: STORED.text });
  result = await flow(["run", script, "--cwd", outside, "--args", args, "--model", "faux/faux-1", "--extension", FAUX_EXTENSION], { env });
}, 300_000);

describe("after a run fed realistic secrets", () => {
  test("the run succeeded, with the children the test expects", () => {
    expect(result.code, result.stderr).toBe(0);
    const value = JSON.parse(result.stdout) as { first: string; again: string; cli: string[]; failed: string[]; byKey: Record<string, string> };
    expect(value.first).toContain("[REDACTED]");
    expect(value.cli).toHaveLength(LINES.length);
    expect(value.failed).toEqual(LINES.map(() => "failed"));
    expect(Object.keys(value.byKey).every((key) => key.includes("[REDACTED]"))).toBe(true);
  });

  test("no file under the Flow home or HOME holds a piece of any secret", () => {
    const files = filesUnder(sandbox.root);
    // The pi children's transcripts are among them.
    expect(files.filter((path) => path.endsWith("/session.jsonl"))).toHaveLength(2);
    // So is flow's own session, kept beside its runs: it holds --args and every tool call's result.
    expect(files.filter((path) => path.endsWith("/flow-session.jsonl"))).toHaveLength(1);
    const leaks: string[] = [];
    for (const path of files) {
      const text = readable(path);
      for (const c of FED) {
        const piece = pieces(c.secret).find((candidate) => text.includes(candidate));
        if (piece !== undefined) leaks.push(`${path.slice(sandbox.root.length)}: ${c.provider}/${c.context} (${piece})`);
      }
    }
    expect(leaks).toEqual([]);
  });

  test("nor does what flow printed", () => {
    const printed = `${result.stdout}\n${result.stderr}`;
    expect(FED.filter((c) => pieces(c.secret).some((piece) => printed.includes(piece))).map((c) => c.provider)).toEqual([]);
  });

  test("the resumed child continued from the redacted transcript: it saw [REDACTED] where the secrets were", () => {
    const asked = readFileSync(fauxLog, "utf8").split("\n").filter((line) => line.startsWith("Check these configs"));
    const resumed = asked.filter((line) => line.includes("[REDACTED]"));
    expect(resumed.length).toBeGreaterThan(0);
    for (const line of resumed) for (const c of FED) expect(pieces(c.secret).some((piece) => line.includes(piece)), c.provider).toBe(false);
  });

  test("every file is its owner's alone (0600), every folder 0700", () => {
    for (const entry of readdirSync(sandbox.flowHome, { recursive: true, withFileTypes: true })) {
      const path = join(entry.parentPath, entry.name);
      expect((statSync(path).mode & 0o777).toString(8), path).toBe(entry.isDirectory() ? "700" : "600");
    }
  });
});
