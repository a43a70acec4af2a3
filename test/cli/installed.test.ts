import { execFile } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { CASSETTES, flowSandbox, PROJECT_ROOT, QUICKSTART, REVIEW_TARGET, type FlowResult } from "./support.ts";

/**
 * pi-flow as `npm install` lays it out: the files package.json publishes, copied under
 * node_modules (where Node refuses to strip types by itself), its dependencies beside it, and the
 * `flow` bin linked into node_modules/.bin.
 */
const root = mkdtempSync(join(tmpdir(), "pi-flow-installed-cli-"));
const sandbox = flowSandbox();
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
  sandbox.dispose();
});

const modules = join(root, "node_modules");
const installed = join(modules, "pi-flow");
const manifest = JSON.parse(readFileSync(join(PROJECT_ROOT, "package.json"), "utf8")) as { files: string[]; bin: Record<string, string> };
mkdirSync(join(modules, ".bin"), { recursive: true });
for (const part of ["package.json", ...manifest.files]) cpSync(join(PROJECT_ROOT, part), join(installed, part), { recursive: true });
for (const name of readdirSync(join(PROJECT_ROOT, "node_modules"))) {
  if (!name.startsWith(".")) symlinkSync(join(PROJECT_ROOT, "node_modules", name), join(modules, name), "dir");
}
symlinkSync(join("..", "pi-flow", manifest.bin.flow!), join(modules, ".bin", "flow"));

/** Runs node_modules/.bin/flow as a shell would find it, with Node >= 22.19 first on the PATH. */
function installedFlow(args: string[]): Promise<FlowResult> {
  const env = { ...sandbox.env, PATH: [dirname(process.execPath), sandbox.env.PATH].join(delimiter) };
  return new Promise((resolve) => {
    execFile(join(modules, ".bin", "flow"), args, { cwd: root, env }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === "number" ? error.code : null) : 0, signal: null, stdout, stderr });
    });
  });
}

test("flow --help runs from an installed copy: its bin strips pi-flow's own types under node_modules", async () => {
  const result = await installedFlow(["--help"]);
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  expect(result.stdout).toMatch(/^flow: run pi-flow workflows from the shell/);
  expect(result.stdout).toContain("flow run <name|path.js>");
});

test("an installed flow replays a shipped workflow end to end", async () => {
  const args = ["run", "review", "--cwd", QUICKSTART, "--args", JSON.stringify({ target: REVIEW_TARGET }), "--replay", join(CASSETTES, "review.jsonl")];
  const result = await installedFlow(args);
  expect(result.stderr).toMatch(/^run wf_\S+ succeeded in /m);
  expect(result.stderr).not.toMatch(/Warning/);
  expect(result.code).toBe(0);
  expect((JSON.parse(result.stdout) as { synthesis: { verdict: string } }).synthesis.verdict).toMatch(/^Request changes\./);
});
