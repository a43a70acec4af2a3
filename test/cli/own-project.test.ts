import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { PACK_COMMAND, packedCheckout } from "../support/packed.ts";
import { flowSandbox, PROJECT_ROOT, shell, userShellEnv } from "./support.ts";

/**
 * docs/workflows.md's "Use pi-flow in a project of your own", as a new user follows it: this
 * checkout packed with npm pack (the doc's command, run once and shared with the other tests that
 * install the tarball), the tarball and node@22 installed into a fresh project by npm
 * (from the npm cache where it can), the doc's workflow file written, and its command run verbatim
 * through npx, with the system's Node first on the PATH and no model or credentials anywhere.
 */
const sandbox = flowSandbox();
// The project holds a whole install (Pi, Node 22): removing it takes a while on a busy machine.
afterAll(() => sandbox.dispose(), 600_000);

const doc = readFileSync(join(PROJECT_ROOT, "docs/workflows.md"), "utf8");
const start = doc.indexOf("## Use pi-flow in a project of your own");
const section = doc.slice(start, doc.indexOf("\n## ", start + 1));
const blocks = (fence: string) => [...section.matchAll(new RegExp("```" + fence + "\\n([\\s\\S]*?)```", "g"))].map((match) => match[1]!);
const [packBlock = "", projectBlock = ""] = blocks("sh");
const script = blocks("js")[0] ?? "";
const [install = "", run = ""] = projectBlock.split("\n").filter((line) => line.trim() !== "");

// npm and npx as a user's shell has them: no npm_* variables of the npm that started the tests, the
// checkout's node_modules off the PATH, and the machine's npm cache (the sandbox has its own HOME).
const env = userShellEnv(sandbox);
env.npm_config_cache = join(process.env.HOME ?? "/root", ".npm");
env.npm_config_update_notifier = "false";

test("npm pack, npm install -D the tarball and node@22 into a fresh project, then npx flow run its own workflow --stub", { timeout: 900_000 }, async () => {
  expect(packBlock.trim()).toBe(PACK_COMMAND);
  expect(install).toBe("npm install -D /path/to/pi-flow/pi-flow-0.1.0.tgz node@22");
  expect(run).toBe("npx flow run triage.js --stub");
  expect(script).toMatch(/^\/\/ triage\.js\n/);

  const packs = packedCheckout(env);
  expect(readdirSync(packs)).toEqual(["pi-flow-0.1.0.tgz"]);

  const project = join(sandbox.root, "my-project");
  mkdirSync(project);
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "my-project", version: "1.0.0", private: true }, null, 2));
  const installed = await shell(`${install.replace("/path/to/pi-flow/", `${packs}/`)} --prefer-offline --no-audit --no-fund`, { env, cwd: project });
  expect(installed.stderr).not.toMatch(/npm error/);
  expect(installed.code).toBe(0);
  expect(JSON.parse(readFileSync(join(project, "package.json"), "utf8"))).toMatchObject({ devDependencies: { "pi-flow": expect.stringMatching(/pi-flow-0\.1\.0\.tgz$/), node: expect.any(String) } });

  writeFileSync(join(project, "triage.js"), script);
  const result = await shell(run, { env, cwd: project });
  expect(result.stderr).toMatch(/^flow: --stub: no model is called/m);
  expect(result.stderr).toMatch(/^run wf_\S+ succeeded in .*: 2 children, 0 failed agent\(\) calls\. Stubbed: /m);
  expect(result.code).toBe(0);
  const value = JSON.parse(result.stdout) as { severity: string; score: number; reasons: string[] };
  expect(["low", "medium", "high"]).toContain(value.severity);
  expect(value.score).toBeGreaterThanOrEqual(1);
  expect(value.reasons.length).toBeGreaterThanOrEqual(1);
});
