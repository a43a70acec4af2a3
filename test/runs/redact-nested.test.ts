import { describe, expect, it } from "vitest";
import { REDACTED, redactedJson, redactText, redactValue } from "../../src/runs/index.ts";

/** What both serialisations of evidence write for `value`: the parsed copy and the one-pass line. */
function bothWays(value: unknown): unknown[] {
  return [redactValue(value).value, JSON.parse(redactedJson(value)!)];
}

describe("a secret nested under a secret name in a structured value", () => {
  it("goes from a list inside the list under the name, at any depth", () => {
    for (const written of bothWays({ password: [["hunter2-secret"]], api_key: [[["9f8e7d6c5b4a39281706"], 12]] })) {
      expect(written).toEqual({ password: [[REDACTED]], api_key: [[[REDACTED], 12]] });
    }
  });

  it("goes from the value field of an object under the name or in its list", () => {
    const value = {
      token: [{ value: "q9Zt4Lw8Nc2Vb6Xm7Rk1", expires: "2030-01-01" }],
      client_secret: { value: "S3cr3tPass9-rotated", note: "rotated" },
      password: [{ value: "hunter2-secret" }, [{ value: "hunter3-secret" }]],
    };
    const expected = {
      token: [{ value: REDACTED, expires: "2030-01-01" }],
      client_secret: { value: REDACTED, note: "rotated" },
      password: [{ value: REDACTED }, [{ value: REDACTED }]],
    };
    for (const written of bothWays(value)) expect(written).toEqual(expected);
  });

  it("keeps placeholders, small numbers and plain keys' lists nested the same way", () => {
    const value = { password: [["${DB_PASSWORD}", 12]], notes: [["hunter2-secret"]], secret: [{ name: "db", value: "****" }] };
    for (const written of bothWays(value)) expect(written).toEqual(value);
  });
});
