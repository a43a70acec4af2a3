import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { PROJECT_ROOT } from "../support/pi-session.ts";

const root = mkdtempSync(join(tmpdir(), "pi-flow-installed-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

test("an installed copy under node_modules runs workflows: the worker strips pi-flow's own types", () => {
  // Lay pi-flow out as `npm install` does: a real copy under node_modules, its dependencies beside it.
  const modules = join(root, "node_modules");
  const installed = join(modules, "pi-flow");
  mkdirSync(installed, { recursive: true });
  for (const part of ["package.json", "runtime", "helpers"]) cpSync(join(PROJECT_ROOT, part), join(installed, part), { recursive: true });
  for (const dependency of ["quickjs-emscripten", "@jitl", "acorn", "json-schema-to-typescript", "jiti"]) {
    symlinkSync(join(PROJECT_ROOT, "node_modules", dependency), join(modules, dependency), "dir");
  }
  // Pi loads extensions with jiti; the probe loads the installed runtime the same way.
  const probe = join(root, "probe.mjs");
  writeFileSync(
    probe,
    `import { createJiti } from "jiti";
     const jiti = createJiti(import.meta.url);
     const runtime = await jiti.import("pi-flow/runtime");
     const workflow = runtime.parseWorkflow("return args.n * 2;", { origin: "inline" });
     const result = await runtime.runWorkflow(workflow, { args: { n: 21 }, host: { agent: async () => ({}) } });
     console.log(JSON.stringify(result.ok ? result.value : result.error));
     await runtime.shutdownWorkflowWorkers();`,
  );
  const out = execFileSync(process.execPath, [probe], { cwd: root, encoding: "utf8" });
  expect(out.trim()).toBe("42");
});
