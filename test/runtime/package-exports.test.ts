import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import * as runtimeSource from "../../runtime/index.ts";
import { packedCheckout } from "../support/packed.ts";
import { PROJECT_ROOT } from "../support/pi-session.ts";

/**
 * The package as npm publishes it: `npm pack` (once, shared with the other tests that install it), the tarball unpacked under a project's node_modules
 * (where Node refuses to strip types by itself) with its dependencies beside it, then imported
 * through the exports map with Node 22 and type-checked with tsc, as docs/runtime.md documents.
 */
const project = mkdtempSync(join(tmpdir(), "pi-flow-packed-"));
afterAll(() => rmSync(project, { recursive: true, force: true }));

function install(): void {
  const packs = packedCheckout();
  const [tarball] = readdirSync(packs);
  const modules = join(project, "node_modules");
  mkdirSync(modules);
  execFileSync("tar", ["-xzf", join(packs, tarball!)], { cwd: project });
  renameSync(join(project, "package"), join(modules, "pi-flow"));
  for (const name of readdirSync(join(PROJECT_ROOT, "node_modules"))) {
    if (!name.startsWith(".")) symlinkSync(join(PROJECT_ROOT, "node_modules", name), join(modules, name), "dir");
  }
  writeFileSync(join(project, "package.json"), JSON.stringify({ type: "module", private: true }));
}

describe("the package surface: exports . and ./runtime", () => {
  it("pi-flow/runtime exports every value runtime/index.ts does", async () => {
    const entry = (await import("../../runtime/index.js")) as Record<string, unknown>;
    expect(Object.keys(entry).sort()).toEqual(Object.keys(runtimeSource).sort());
    expect(entry.runWorkflow).toBe(runtimeSource.runWorkflow);
  });

  it("an installed tarball runs a workflow through import 'pi-flow/runtime' and type-checks against it", () => {
    install();
    writeFileSync(
      join(project, "probe.mjs"),
      `import { parseWorkflow, runWorkflow, shutdownWorkflowWorkers } from "pi-flow/runtime";
       import extension from "pi-flow";
       const workflow = parseWorkflow("export default async function ({ args }) { return args.n * 2; }", { origin: "inline" });
       const result = await runWorkflow(workflow, { args: { n: 21 }, host: { agent: async () => ({}) } });
       let deep;
       try { await import("pi-flow/runtime/index.ts"); } catch (error) { deep = error.code; }
       console.log(JSON.stringify({ value: result.ok ? result.value : result.error, extension: typeof extension, deep }));
       await shutdownWorkflowWorkers();`,
    );
    const out = execFileSync(process.execPath, ["probe.mjs"], { cwd: project, encoding: "utf8" });
    expect(JSON.parse(out)).toEqual({ value: 42, extension: "function", deep: "ERR_PACKAGE_PATH_NOT_EXPORTED" });

    writeFileSync(
      join(project, "typed.ts"),
      `import { parseWorkflow, type ParsedWorkflow } from "pi-flow/runtime";\nexport const parsed: ParsedWorkflow = parseWorkflow("return 1;", { origin: "inline" });\nexport const wrong: number = parseWorkflow("return 1;", { origin: "inline" });\n`,
    );
    const compilerOptions = { module: "nodenext", moduleResolution: "nodenext", strict: true, noEmit: true, allowImportingTsExtensions: true, skipLibCheck: true, target: "es2022", types: ["node"] };
    writeFileSync(join(project, "tsconfig.json"), JSON.stringify({ compilerOptions, files: ["typed.ts"] }));
    let diagnostics = "";
    try {
      execFileSync(process.execPath, [join(PROJECT_ROOT, "node_modules/typescript/bin/tsc"), "-p", "."], { cwd: project, encoding: "utf8" });
    } catch (error) {
      diagnostics = String((error as { stdout?: string }).stdout);
    }
    // Exactly the one mistake: the import resolved, with the runtime's own types.
    expect(diagnostics.trim().split("\n")).toEqual([expect.stringMatching(/^typed\.ts\(3,14\): error TS2322: Type 'ParsedWorkflow' is not assignable to type 'number'\./)]);
  });
});
