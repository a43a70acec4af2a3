import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * What redaction keeps in memory once a text is redacted. A text over the memo's size (a long tool
 * output, megabytes) is not remembered, so its secrets must not stay reachable in plain text: a
 * heap snapshot of a process that redacted one must not hold the secret.
 */
const INDEX = resolve(import.meta.dirname, "../../src/runs/index.ts");

/** Redacts a 1 MiB text holding `sudo -S … <<< 'password'` in a fresh process; prints whether its heap still holds the password. */
const probe = `
import { randomUUID } from "node:crypto";
import { readFileSync, rmSync } from "node:fs";
import { writeHeapSnapshot } from "node:v8";
import { redactText } from ${JSON.stringify(INDEX)};
const reversed = (text) => [...text].reverse().join("");
/** Only the password reversed outlives this call: the heap holds the password only if redaction kept it. */
function redactOne() {
  const password = ["pw", randomUUID()].join("-");
  const text = "sudo -S apt-get install -y vim <<< '" + password + "'\\n" + "x".repeat(1 << 20);
  return { leaked: redactText(text).text.includes(password), hidden: reversed(password) };
}
const { leaked, hidden } = redactOne();
/z/.exec("z"); // a successful match resets the last match V8 keeps, whose subject was the text
const file = writeHeapSnapshot();
const held = readFileSync(file, "utf8").includes(reversed(hidden));
rmSync(file);
console.log(JSON.stringify({ leakedInOutput: leaked, held }));
`;

describe("a long text after redaction", () => {
  it("is not kept in memory with its secret in plain text", () => {
    const dir = mkdtempSync(join(tmpdir(), "redact-memory-"));
    try {
      writeFileSync(join(dir, "probe.mts"), probe);
      const out = execFileSync(process.execPath, ["--no-warnings", "probe.mts"], { cwd: dir, encoding: "utf8" });
      expect(JSON.parse(out.trim().split("\n").pop()!)).toEqual({ leakedInOutput: false, held: false });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
