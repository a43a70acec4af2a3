// What a cassette keeps of a worktree child's changes: a real git patch, redacted where it is text,
// byte for byte where it is binary data, and still a patch git applies.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, test } from "vitest";
import { patchBytes, recordedChanges } from "../../src/harnesses/cassette-changes.ts";
import { gitIn, makeRepo, writeIn } from "../support/git-repo.ts";

const SECRET = `AKIA${"Q".repeat(8)}7EXAMPLE`;

test("a recorded patch has its text's secrets redacted, keeps binary data exactly, and still applies", () => {
  const repo = makeRepo({ "config.txt": "region = eu\n" });
  const blob = randomBytes(4096); // random bytes: base85 lines that look like tokens to a pattern
  writeIn(repo, { "config.txt": `region = eu\nkey = ${SECRET}\n`, "blob.bin": blob });
  gitIn(repo, "add", "-A");
  const patch = execFileSync("git", ["diff", "--cached", "--binary", "HEAD"], { cwd: repo });
  gitIn(repo, "reset", "-q", "--hard");

  const changes = recordedChanges(patch);
  expect(typeof changes).toBe("string");
  expect(changes).not.toContain(SECRET);
  expect(changes).toContain("+key = [REDACTED]");
  const text = patch.toString("utf8");
  const binary = text.slice(text.indexOf("GIT binary patch"), text.indexOf("diff --git a/config.txt"));
  expect(binary.length).toBeGreaterThan(4096);
  expect(changes).toContain(binary); // the binary part, untouched

  execFileSync("git", ["apply", "-"], { cwd: repo, input: patchBytes(changes) });
  expect(readFileSync(join(repo, "blob.bin")).equals(blob)).toBe(true);
  expect(readFileSync(join(repo, "config.txt"), "utf8")).toBe("region = eu\nkey = [REDACTED]\n");
});
