import { randomUUID } from "node:crypto";
import { expect, test } from "vitest";
import { newRunId } from "../../src/runs/ids.ts";
import { redactedJson, redactText, redactValue } from "../../src/runs/redact/index.ts";

const secret = "sk-ant-api03-" + "Xq7Lp2Vn9Rt4Wb6Yc1Hd8Jf3Kg5Mz0Ns-AA";

test("times, UUIDs, short hex ids and run IDs (what every transcript entry and child carries) pass through unchanged", () => {
  for (let i = 0; i < 200; i++) {
    const at = Date.UTC(2026, 0, 1) + i * 987_654_321;
    for (const text of [randomUUID(), randomUUID().slice(0, 8), new Date(at).toISOString(), newRunId("agent", at), newRunId("workflow", at)]) {
      expect(redactText(text)).toEqual({ text, changed: false });
    }
  }
  // A secret is still a secret beside them, and under a secret-named key a plain shape is still withheld.
  expect(redactText(`${randomUUID()} ${secret}`).text).toContain("[REDACTED]");
  expect(redactValue({ password: "deadbeef" }).value).toEqual({ password: "[REDACTED]" });
});

test("redactedJson is the redacted value's JSON, whether or not anything in it was a secret", () => {
  const plain = { id: randomUUID().slice(0, 8), at: new Date().toISOString(), text: "answer 1", nested: [{ n: 1, skip: undefined }] };
  expect(redactedJson(plain)).toBe(JSON.stringify(redactValue(plain).value));
  const withSecret = { message: { content: [{ type: "text", text: `use ${secret}` }] }, token: "hunter2hunter2" };
  expect(redactedJson(withSecret)).toBe(JSON.stringify(redactValue(withSecret).value));
  expect(redactedJson(withSecret)).not.toContain(secret);
  expect(redactedJson(undefined)).toBeUndefined();
});

/** A String object dressed as a plain object: Object.prototype, with conversions of its own. */
const disguised = (conversions: object): object => Object.assign(Object.setPrototypeOf(new String("x"), Object.prototype) as object, conversions);

test("redactedJson redacts each string where JSON.stringify puts it: key rules for object values only, toJSON first", () => {
  // Written in one pass (no parsed copy), it must agree with redactValue on every shape a line holds.
  const shapes: unknown[] = [
    secret,
    "password",
    [secret, "hunter2hunter2", { password: "hunter2hunter2" }],
    { password: ["hunter2hunter2"], list: ["token", "hunter2hunter2"], apiKey: "AKIA1234567890ABCDEF", auth: "dXNlcjpwYXNzd29yZA==" },
    { at: new Date(Date.UTC(2026, 0, 1)), when: { toJSON: () => `token=${secret}` }, gone: undefined, fn: () => 1, n: -0, big: 1e21 },
    { password: "[REDACTED]", "": secret, nested: { deeper: { client_secret: "s3cr3t-value-1234" } } },
    Object.assign(Object.create(null) as object, { token: "hunter2hunter2" }),
    // Objects JSON writes as strings: a String object, and raw JSON text holding a string.
    { boxed: new String(`key ${secret}`), password: new String("hunter2hunter2"), list: [new String(secret)] },
    { raw: (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON(JSON.stringify(`key ${secret}`)), n: (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON("12") },
    // A String object whose prototype and conversions were replaced: JSON still writes it as text,
    // the text its conversion gives.
    { note: disguised({ toString: () => `token=${secret}` }), password: disguised({ toString: () => "hunter2hunter2" }) },
    { key: disguised({ [Symbol.toPrimitive]: () => `key ${secret}` }), own: Object.assign(new String("safe"), { toString: () => `key ${secret}` }) },
  ];
  for (const value of shapes) {
    const json = redactedJson(value);
    expect(json).toBe(JSON.stringify(redactValue(value).value));
    expect(json).not.toContain(secret);
  }
});

test("a long text seen again (a system prompt section every pi child's session holds) is redacted as the first time", () => {
  const section = `<rules>\n${"- Use read to examine files instead of cat or sed.\n".repeat(40)}</rules>`;
  const withSecret = `${section}\nkey: ${secret}`;
  for (let i = 0; i < 3; i++) {
    expect(redactText(section)).toEqual({ text: section, changed: false });
    expect(redactText(withSecret)).toEqual({ text: `${section}\nkey: [REDACTED]`, changed: true });
  }
});
