// What a cassette keeps of a worktree child's changes: a real git patch, redacted where it is text,
// byte for byte where it is binary data, and still a patch git applies.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, test } from "vitest";
import { patchBytes, recordedChanges } from "../../src/harnesses/cassette-changes.ts";
import { redactGitPatch } from "../../src/runs/index.ts";
import { gitIn, makeRepo, writeIn } from "../support/git-repo.ts";

const SECRET = `AKIA${"Q".repeat(8)}7EXAMPLE`;

test("a recorded patch has its text's secrets redacted, keeps binary data exactly, and still applies", () => {
  const repo = makeRepo({ "config.txt": "region = eu\n" });
  const blob = randomBytes(4096); // random bytes: base85 lines that look like tokens to a pattern
  writeIn(repo, { "config.txt": `region = eu\nkey = ${SECRET}\n`, "blob.bin": blob });
  gitIn(repo, "add", "-A");
  const patch = execFileSync("git", ["diff", "--cached", "--binary", "HEAD"], { cwd: repo });
  gitIn(repo, "reset", "-q", "--hard");

  const { changes, withheld } = recordedChanges(patch);
  expect(withheld).toEqual([]);
  expect(typeof changes).toBe("string");
  expect(changes).not.toContain(SECRET);
  expect(changes).toContain("+key = [REDACTED]");
  const text = patch.toString("utf8");
  const binary = text.slice(text.indexOf("GIT binary patch"), text.indexOf("diff --git a/config.txt"));
  expect(binary.length).toBeGreaterThan(4096);
  expect(changes).toContain(binary); // the binary part, untouched

  execFileSync("git", ["apply", "-"], { cwd: repo, input: patchBytes(changes!) });
  expect(readFileSync(join(repo, "blob.bin")).equals(blob)).toBe(true);
  expect(readFileSync(join(repo, "config.txt"), "utf8")).toBe("region = eu\nkey = [REDACTED]\n");
});

test("a binary file whose bytes hold a secret is left out of the cassette and withheld from the patch view; the rest still applies", () => {
  const repo = makeRepo({ "config.txt": "region = eu\n" });
  // A secret among binary bytes: git deflates and base85-encodes it, so no pattern sees it in the patch as written.
  const leaky = Buffer.concat([randomBytes(512), Buffer.from(`\0token=${SECRET}\0`), randomBytes(512)]);
  const clean = randomBytes(1024);
  writeIn(repo, { "config.txt": "region = us\n", "leaky.bin": leaky, "clean.bin": clean });
  gitIn(repo, "add", "-A");
  const patch = execFileSync("git", ["diff", "--cached", "--binary", "HEAD"], { cwd: repo });
  gitIn(repo, "reset", "-q", "--hard");
  gitIn(repo, "clean", "-q", "-f");
  expect(patch.toString("latin1")).not.toContain(SECRET); // hidden, not absent: hence the decoding

  const { changes, withheld } = recordedChanges(patch);
  expect(withheld).toEqual(["a/leaky.bin b/leaky.bin"]);
  expect(JSON.stringify(changes)).not.toContain("leaky.bin");
  execFileSync("git", ["apply", "-"], { cwd: repo, input: patchBytes(changes!) });
  expect(readFileSync(join(repo, "clean.bin")).equals(clean)).toBe(true);
  expect(readFileSync(join(repo, "config.txt"), "utf8")).toBe("region = us\n");
  expect(() => readFileSync(join(repo, "leaky.bin"))).toThrow(/ENOENT/);

  // The patch view keeps the file's header and says why its data is not there.
  const view = redactGitPatch(patch.toString("utf8"), "note");
  expect(view.withheld).toEqual(["a/leaky.bin b/leaky.bin"]);
  expect(view.text).toContain("diff --git a/leaky.bin b/leaky.bin");
  expect(view.text).toContain("(binary data withheld: the file's bytes hold a secret)");
  expect(view.text).toContain("diff --git a/clean.bin b/clean.bin");
});

test("binary data that is not what git writes is withheld rather than passed unread", () => {
  const forged = "diff --git a/x.bin b/x.bin\nnew file mode 100644\nindex 0000000..1111111\nGIT binary patch\nliteral 5\nnot base85 at all\n\n";
  expect(redactGitPatch(forged, "drop")).toEqual({ text: "", withheld: ["a/x.bin b/x.bin"] });
});

test("a binary file too large to search once inflated is withheld unread, never inflated whole", () => {
  const repo = makeRepo({ "config.txt": "region = eu\n" });
  writeIn(repo, { "zeros.bin": Buffer.concat([Buffer.from([0]), Buffer.alloc(17 * 1024 * 1024)]) }); // compresses to a few KiB
  gitIn(repo, "add", "-A");
  const patch = execFileSync("git", ["diff", "--cached", "--binary", "HEAD"], { cwd: repo, maxBuffer: 64 * 1024 * 1024 });
  gitIn(repo, "reset", "-q", "--hard");
  expect(redactGitPatch(patch.toString("utf8"), "note").withheld).toEqual(["a/zeros.bin b/zeros.bin"]);
});
