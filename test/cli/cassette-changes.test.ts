// Cassettes that carry a worktree child's changes: recorded from the child's worktree, played back
// into the replayed child's worktree, refused anywhere else. Real git, the real flow command.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { flowInProcess } from "./in-process.ts";
import { FAUX_EXTENSION, flowSandbox, PROJECT_ROOT, shell, type FlowResult } from "./support.ts";
import { gitIn, makeRepo, worktreeCount } from "../support/git-repo.ts";

const sandbox = flowSandbox();
afterAll(() => sandbox.dispose());

/** Runs `npx flow …` as docs-commands.test.ts does: the shell splits the words, flow's main runs here. */
async function npxFlow(line: string, env: NodeJS.ProcessEnv): Promise<FlowResult> {
  const words = await shell(`printf '%s\\0' ${line.slice("npx flow ".length)}`, { env });
  expect(words.code).toBe(0);
  return flowInProcess(words.stdout.split("\0").slice(0, -1), { env });
}

describe("the shipped parallel-edit cassette, as docs/isolation.md tells a user to run it", () => {
  const docs = readFileSync(join(PROJECT_ROOT, "docs", "isolation.md"), "utf8");
  const block = [...docs.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!).find((text) => text.includes("parallel-edit"))!;
  const expectedStatus = /```\n( M [\s\S]*?)```/.exec(docs)?.[1];
  const demo = join(sandbox.root, "parallel edit demo");
  const outputs: FlowResult[] = [];

  beforeAll(async () => {
    for (const line of block.trim().split("\n").map((text) => text.replaceAll("/tmp/parallel-edit-demo", `'${demo}'`))) {
      const result = line.startsWith("npx flow ") ? await npxFlow(line, sandbox.env) : await shell(line, { env: sandbox.env });
      expect(result.code, `${line}\n${result.stderr}`).toBe(0);
      outputs.push(result);
    }
  }, 120_000);

  test("with no model, the writers' changes land in the working tree exactly, nothing staged, no worktree left", () => {
    const src = (path: string) => readFileSync(join(demo, path), "utf8");
    expect(src("src/slugify.js")).toContain('.replace(/^-|-$/g, "");');
    expect(src("src/truncate.js")).toBe(
      '// Shortens text to at most `max` characters, ending with an ellipsis when it cut.\nexport function truncate(text, max) {\n  if (max <= 0) return "";\n  if (text.length <= max) return text;\n  return `${text.slice(0, max - 1)}…`;\n}\n',
    );
    expect(src("test/truncate.test.js")).toContain('assert.equal(truncate("abc", 0), "");');
    expect(outputs.at(-1)!.stdout).toBe(expectedStatus); // the status the docs show
    expect(gitIn(demo, "diff", "--cached", "--name-only")).toBe("");
    expect(worktreeCount(demo)).toBe(1);
  });

  test("the excerpt of parallel-edit the docs show is the shipped file's own text, part by part", () => {
    const excerpt = /```js\n\/\/ workflows\/parallel-edit\.js, as shipped \(excerpt\)\n([\s\S]*?)```/.exec(docs)![1]!;
    const shipped = readFileSync(join(PROJECT_ROOT, "workflows", "parallel-edit.js"), "utf8");
    const parts = excerpt.split("  // …\n");
    expect(parts).toHaveLength(2);
    for (const part of parts) expect(shipped).toContain(part);
    expect(excerpt).toContain('isolation: "worktree"');
    expect(excerpt).toContain('tools.external_runs({ action: "apply"');
  });

  test("the run's value says what was applied and that nothing conflicted", () => {
    const value = JSON.parse(outputs.find((result) => result.stderr.includes("started: parallel-edit"))!.stdout) as Record<string, { path: string; files?: string[] }[]>;
    expect(value.applied!.map(({ path, files }) => [path, files])).toEqual([
      ["src/slugify.js", ["src/slugify.js"]],
      ["src/truncate.js", ["src/truncate.js"]],
      ["test/truncate.test.js", ["test/truncate.test.js"]],
    ]);
    expect([value.conflicts, value.unchanged, value.failed]).toEqual([[], [], []]);
  });
});

describe("recording and replaying a worktree writer", () => {
  let repo: string;
  const cassette = join(sandbox.root, "writer.jsonl");
  const script = (isolation: boolean) =>
    sandbox.file(
      `${isolation ? "writer" : "unisolated-writer"}.js`,
      `export const apiVersion = 1;
      export const meta = { name: "${isolation ? "writer" : "unisolated-writer"}", description: "One writer." };
      export default async function () {
        try {
          const run = await agent({ role: "worker", description: "Write the files", prompt: "Write the files.", context: { mode: "none" }${isolation ? ', isolation: "worktree"' : ""} });
          return { ok: true, runId: run.runId };
        } catch (error) {
          return { ok: false, runId: error.runId ?? null, message: error.message };
        }
      }`,
    );
  const run = async (args: string[]) => {
    const result = await flowInProcess(["run", ...args, "--cwd", repo], { env: sandbox.env });
    expect(result.code, result.stderr).toBe(0);
    return JSON.parse(result.stdout) as { ok: boolean; runId: string; message?: string };
  };
  const treeOf = (runId: string) => gitIn(repo, "rev-parse", `refs/pi-flow/${runId}^{tree}`);
  let recorded: { ok: boolean; runId: string };

  beforeAll(async () => {
    repo = makeRepo({ "a.txt": "alpha\n", "old.txt": "to be removed\n" });
    // One tool call writes a text file, a binary file and a Latin-1 one, and deletes another.
    sandbox.fauxRules([
      {
        match: "Write the files.",
        tool: { name: "bash", arguments: { command: "printf 'alpha\\nbeta\\n' > a.txt && printf '\\000\\001\\377png' > blob.bin && printf 'caf\\351\\n' > latin1.txt && rm old.txt" } },
        then: "Wrote them.",
      },
    ]);
    recorded = await run([script(true), "--model", "faux/faux-1", "--extension", FAUX_EXTENSION, "--record", cassette]);
  }, 120_000);

  test("the recorded entry carries the child's changes as a git patch; the user's tree is untouched", () => {
    expect(recorded.ok).toBe(true);
    const entry = JSON.parse(readFileSync(cassette, "utf8").trim().split("\n")[1]!) as { changes: { base64: string } };
    // latin1.txt is not UTF-8, so the patch is kept as base64: every byte survives the JSON line.
    const patch = Buffer.from(entry.changes.base64, "base64").toString("latin1");
    expect(patch).toContain("diff --git a/a.txt b/a.txt");
    expect(patch).toContain("GIT binary patch");
    expect(patch).toContain("deleted file mode");
    expect(patch).toContain("+caf\u00e9");
    expect(readFileSync(join(repo, "a.txt"), "utf8")).toBe("alpha\n");
    expect(existsSync(join(repo, "blob.bin"))).toBe(false);
  });

  test("replayed with no model, the child's ref holds exactly the tree the recorded child's did", async () => {
    const replayed = await run([script(true), "--replay", cassette]);
    expect(replayed.ok).toBe(true);
    expect(replayed.runId).not.toBe(recorded.runId);
    expect(treeOf(replayed.runId)).toBe(treeOf(recorded.runId));
    expect(gitIn(repo, "show", `refs/pi-flow/${replayed.runId}:a.txt`)).toBe("alpha\nbeta");
    expect(existsSync(join(repo, "blob.bin"))).toBe(false); // nothing reaches the tree before apply
    expect(worktreeCount(repo)).toBe(1);
  });

  test("replayed for a child not isolated in a worktree, the changes fail the child and nothing is written", async () => {
    const replayed = await run([script(false), "--replay", cassette]);
    expect(replayed.ok).toBe(false);
    expect(replayed.message).toMatch(/line 2, role:worker "Write the files" #1 .*\) carries changes, but this child is not isolated in a worktree/);
    expect(readFileSync(join(repo, "a.txt"), "utf8")).toBe("alpha\n");
    expect(existsSync(join(repo, "old.txt"))).toBe(true);
    expect(gitIn(repo, "status", "--porcelain")).toBe("");
  });

  test("a patch that does not apply fails the child with git's message, and the child keeps no changes", async () => {
    const stale = sandbox.file(
      "stale.jsonl",
      '{"format":"pi-flow-cassette","version":1}\n' +
        JSON.stringify({
          key: { agent: "role:worker", description: "Write the files" },
          answer: "Wrote them.",
          changes: "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1,2 @@\n-not what a.txt holds\n+alpha\n+beta\n",
        }) +
        "\n",
    );
    const replayed = await run([script(true), "--replay", stale, "--replay-mode", "loose"]);
    expect(replayed.ok).toBe(false);
    expect(replayed.message).toMatch(/carries changes that do not apply to the child's worktree \(nothing was written\): error: patch failed: a\.txt:1/);
    expect(gitIn(repo, "for-each-ref", `refs/pi-flow/${replayed.runId}`)).toBe("");
    expect(worktreeCount(repo)).toBe(1);
  });
});

test("flow check names each line whose changes are not a git patch", async () => {
  const path = join(sandbox.root, "bad-changes.jsonl");
  const entry = (description: string, changes: unknown) => JSON.stringify({ key: { agent: "role:worker", description }, answer: "done", changes });
  writeFileSync(path, ['{"format":"pi-flow-cassette","version":1}', entry("one", "just some text"), entry("two", 42), entry("three", { base64: "*" }), entry("four", "diff --git a/x b/x\n"), entry("five", "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n")].join("\n"));
  const result = await flowInProcess(["check", "--cassette", path], { env: sandbox.env });
  rmSync(path);
  expect(result.code).toBe(2);
  expect(result.stdout).toContain(`${path}:2: changes must be a git patch of the child\'s worktree against its base (what git diff --binary writes: a "diff --git" line, or ---/+++ lines, per file)`);
  expect(result.stdout).toContain(`${path}:3: changes must be a git patch (text), or { "base64": … } of one that is not UTF-8`);
  expect(result.stdout).toContain(`${path}:4: changes.base64 is not base64`);
  expect(result.stdout).not.toMatch(/:[56]: /); // a git patch, and a plain unified diff: both fine
});

test("docs/cli.md's hand-written entry with changes, replayed loose for parallel-edit's writer, lands its line", async () => {
  const docs = readFileSync(join(PROJECT_ROOT, "docs", "cli.md"), "utf8");
  const entry = /```\n(\{"key"[^\n]*"changes"[^\n]*)\n```/.exec(docs)![1]!;
  const cassette = sandbox.file("notes.jsonl", `{"format":"pi-flow-cassette","version":1}\n${entry}\n`);
  const repo = makeRepo({ "notes.txt": "first line\n" });
  const args = JSON.stringify({ edits: [{ path: "notes.txt", task: "Add a second line." }] });
  const result = await flowInProcess(["run", "parallel-edit", "--cwd", repo, "--args", args, "--replay", cassette, "--replay-mode", "loose"], { env: sandbox.env });
  expect(result.code, result.stderr).toBe(0);
  expect(JSON.parse(result.stdout)).toMatchObject({ applied: [{ path: "notes.txt", files: ["notes.txt"] }], conflicts: [] });
  expect(readFileSync(join(repo, "notes.txt"), "utf8")).toBe("first line\nsecond line\n");
});

test("parallel-edit outside a git working tree fails as configuration_invalid; when every writer fails, the run fails naming each", async () => {
  const args = JSON.stringify({ edits: [{ path: "a.txt", task: "Add a line." }] });
  const plain = join(sandbox.root, "not-a-repository");
  mkdirSync(plain);
  const outside = await flowInProcess(["run", "parallel-edit", "--cwd", plain, "--args", args, "--replay", join(PROJECT_ROOT, "examples/cassettes/parallel-edit.jsonl")], { env: sandbox.env });
  expect(outside.code).toBe(1);
  expect(outside.stderr).toMatch(/isolation "worktree" needs a git working tree: this directory is not inside a git repository .*\[configuration_invalid\]/);

  const failing = sandbox.file("failing.jsonl", '{"format":"pi-flow-cassette","version":1}\n{"key":{"agent":"role:worker","description":"Edit a.txt"},"outcome":"failed","error":{"message":"the model was overloaded"}}\n');
  const repo = makeRepo({ "a.txt": "alpha\n" });
  const failed = await flowInProcess(["run", "parallel-edit", "--cwd", repo, "--args", args, "--replay", failing, "--replay-mode", "loose"], { env: sandbox.env });
  expect(failed.code).toBe(1);
  expect(failed.stderr).toMatch(/^flow: every writer failed: a\.txt \(failed: agent\(\) child ag_\S+ failed: the model was overloaded\)/m);
});
