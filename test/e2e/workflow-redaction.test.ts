import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { childAnswers } from "../support/children.ts";
import { journalOf as journalIn } from "../support/journals.ts";
import { callForReceipt } from "../support/receipts.ts";
import { startPiSession, type PiTestSession, type TurnScript } from "../support/pi-session.ts";

// What a workflow run keeps of a secret: its store() lines, its value, its files and what reaches the model.
let pi: PiTestSession;
beforeEach(async () => {
  pi = await startPiSession();
});
afterEach(() => pi.dispose());

const workflow = (args: Record<string, unknown>, script: TurnScript = {}) => callForReceipt(pi, "external_workflow", args, script);
const journalOf = (runId: string) => journalIn(pi.flowHome, runId);
const explorer = (prompt: string) => `agent({ role: "explorer", description: "d", prompt: ${JSON.stringify(prompt)}, context: { mode: "none" } })`;

describe("secrets in a workflow run", () => {
  test("a number or a list under a secret name is kept no more than a string is: in store() lines, the final value and every file", async () => {
    // Computed, so the script's own text (kept in the launch record) does not hold them.
    const script = [
      'store("db_password", 83749000 + 212);',
      'store("api_key", ["correct-horse-" + "battery-staple", 61803000 + 398]);',
      'return { password: 27182000 + 818, pin: 1234, token: ["shelf-lantern-" + "orbit-9"], port: 5432 };',
    ].join("\n");
    const { receipt, run } = await workflow({ script });
    expect(receipt.ok).toBe(true);
    expect(run!.output).toMatchObject({ value: { password: "[REDACTED]", pin: 1234, token: ["[REDACTED]"], port: 5432 } });
    const stores = journalOf(run!.runId).filter((line) => line.t === "store");
    expect(stores.map((line) => line.value)).toEqual(["[REDACTED]", ["[REDACTED]", "[REDACTED]"]]);
    const files = readdirSync(pi.flowHome, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile());
    for (const entry of files) {
      const text = readFileSync(join(entry.parentPath, entry.name), "utf8");
      for (const secret of ["83749212", "61803398", "27182818", "correct-horse-battery-staple", "shelf-lantern-orbit-9"]) expect(text, entry.name).not.toContain(secret);
    }
  });

  test("a private key handed on line by line, printed or stored as a list of lines, keeps none of its lines in any file", async () => {
    const body = ["MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj", "MzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu", "NMoSfm76oqFvAp8Gy0iz5sxjZmSnXyCdPEovGhLa0VzMaQ8s+CLOyS56YyCFGeJZ"];
    const key = ["-----BEGIN PRIVATE KEY-----", ...body, "-----END PRIVATE KEY-----"].join("\n");
    const script = ['const lines = args.key.split("\\n");', "for (const line of lines) console.log(line);", 'store("lines", lines);', "return { lines, after: \"kept\" };"].join("\n");
    const { receipt, run } = await workflow({ script, args: { key } });
    expect(receipt.ok).toBe(true);
    expect(run!.output).toMatchObject({ value: { lines: ["[REDACTED]", "[REDACTED]", "[REDACTED]", "[REDACTED]", "[REDACTED]"], after: "kept" } });
    const files = readdirSync(pi.flowHome, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile());
    expect(files.map((entry) => entry.name)).toContain("output.log");
    for (const entry of files) {
      const text = readFileSync(join(entry.parentPath, entry.name), "utf8");
      for (const line of body) expect(text, entry.name).not.toContain(line.slice(20, 40));
    }
  });

  test("a secret set as a name/value pair (a Kubernetes or ECS env entry) is redacted as NAME=value is: in YAML, in JSON text and in a value", async () => {
    const answer = [
      "The pod's env:",
      "- name: DB_PASSWORD",
      "  value: Hunter2Secret77",
      "- name: LOG_LEVEL",
      "  value: debug",
      'and the task definition: [{"name": "API_TOKEN", "value": "q9Zt4Lw8Nc2Vb6Xm"}]',
    ].join("\n");
    const script = [
      `const a = await ${explorer("Show the pod's env")};`,
      'return { env: [{ name: "DB_PASSWORD", value: "S3cr3t" + "Pass9x" }, { Name: "SIGNING_KEY", Value: "9f8e7d6c" + "5b4a3928" }, { name: "LOG_LEVEL", value: "debug" }], said: a.value };',
    ].join("\n");
    const { receipt, run } = await workflow({ script }, { children: [childAnswers(answer)] });
    expect(receipt.ok).toBe(true);
    const value = (run!.output as { value: { env: unknown[]; said: string } }).value;
    expect(value.env).toEqual([{ name: "DB_PASSWORD", value: "[REDACTED]" }, { Name: "SIGNING_KEY", Value: "[REDACTED]" }, { name: "LOG_LEVEL", value: "debug" }]);
    expect(value.said).toContain("- name: LOG_LEVEL\n  value: debug");
    const files = readdirSync(pi.flowHome, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile());
    expect(files.map((entry) => entry.name)).toContain("session.jsonl");
    for (const entry of files) {
      const text = readFileSync(join(entry.parentPath, entry.name), "utf8");
      for (const secret of ["Hunter2Secret77", "q9Zt4Lw8Nc2Vb6Xm", "S3cr3tPass9x", "9f8e7d6c5b4a3928"]) expect(text, entry.name).not.toContain(secret);
    }
  });

  test("an Authorization header kept as a value (a request's headers object) is redacted as the header line is", async () => {
    const script = 'return { headers: { Authorization: "9f8e7d6c5b4a" + "39281706f5e4d3c2b1a0", "Proxy-Authorization": "Token q9Zt4Lw8" + "Nc2Vb6Xm", Accept: "application/json" }, auth: "required" };';
    const { receipt, run } = await workflow({ script });
    expect(receipt.ok).toBe(true);
    expect(run!.output).toMatchObject({ value: { headers: { Authorization: "[REDACTED]", "Proxy-Authorization": "[REDACTED]", Accept: "application/json" }, auth: "required" } });
    for (const entry of readdirSync(pi.flowHome, { recursive: true, withFileTypes: true }).filter((file) => file.isFile())) {
      const text = readFileSync(join(entry.parentPath, entry.name), "utf8");
      for (const secret of ["9f8e7d6c5b4a39281706f5e4d3c2b1a0", "q9Zt4Lw8Nc2Vb6Xm"]) expect(text, entry.name).not.toContain(secret);
    }
  });

  test("a session cookie kept in a headers object, or as JSON text, is redacted as the Cookie header line is", async () => {
    const script = [
      'const cookie = "theme=dark; sessionid=" + "Zt4Lw8Nc2Vb6Xm9q" + "Hk3Jd7Fs1Ga5Pe0R";',
      "return { headers: { Cookie: cookie, Accept: \"text/html\" }, text: JSON.stringify({ cookie }), plain: { cookie: \"theme=dark\" } };",
    ].join("\n");
    const { receipt, run } = await workflow({ script });
    expect(receipt.ok).toBe(true);
    expect(run!.output).toMatchObject({ value: { headers: { Cookie: "[REDACTED]", Accept: "text/html" }, text: '{"cookie":"theme=dark; sessionid=[REDACTED]"}', plain: { cookie: "theme=dark" } } });
    for (const entry of readdirSync(pi.flowHome, { recursive: true, withFileTypes: true }).filter((file) => file.isFile())) {
      expect(readFileSync(join(entry.parentPath, entry.name), "utf8"), entry.name).not.toContain("Zt4Lw8Nc2Vb6Xm9qHk3Jd7Fs1Ga5Pe0R");
    }
  });

  test("a script_invalid rejection quoting a secret from the script reaches the model redacted", async () => {
    const secret = "sk-ant-api03-" + "M".repeat(40);
    const result = await pi.callTool("external_workflow", { script: `export const meta = { tools: [${JSON.stringify(secret)}] };\nreturn 1;` });
    expect(result.structuredContent).toMatchObject({ ok: false, data: { run: null }, error: { code: "script_invalid", message: expect.stringContaining("meta.tools names [REDACTED]") } });
    expect(JSON.stringify(result.structuredContent)).not.toContain(secret);
    expect(result.text).not.toContain(secret);
  });

  test("a secret in a child's answer reaches the script redacted, short or longer than the redaction memo keeps (512 Ki characters)", async () => {
    const secret = "sk-ant-api03-" + "B".repeat(40);
    const long = `${"z".repeat(600 * 1024)} ${secret}`;
    const script = `const a = await ${explorer("p")};\nconst b = await ${explorer("q")};\nreturn { a: a.value, bTail: b.value.slice(-11), bLength: b.value.length };`;
    const { receipt, run } = await workflow({ script }, { children: [childAnswers(`the key is ${secret}`), childAnswers(long)] });
    expect(receipt.ok).toBe(true);
    expect(JSON.stringify(receipt)).not.toContain(secret);
    expect(run!.output).toMatchObject({ value: { a: "the key is [REDACTED]", bTail: " [REDACTED]" } });
  });
});
