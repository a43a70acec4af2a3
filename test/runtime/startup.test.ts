import { execFileSync } from "node:child_process";
import { expect, test } from "vitest";

const runtimeUrl = new URL("../../runtime/index.ts", import.meta.url).href;

test("importing the runtime does not load json-schema-to-typescript; generating declarations does", () => {
  // A fresh process records every module it resolves.
  const probe = `
    import { registerHooks } from "node:module";
    const seen = [];
    registerHooks({ resolve(specifier, context, next) { const result = next(specifier, context); seen.push(result.url); return result; } });
    const loaded = () => seen.some((url) => url.includes("json-schema-to-typescript"));
    const runtime = await import(${JSON.stringify(runtimeUrl)});
    const atImport = loaded();
    const text = await runtime.generateDeclarations({});
    console.log(JSON.stringify({ atImport, afterGenerating: loaded(), generated: text.includes("declare function agent") }));
  `;
  const out = execFileSync(process.execPath, ["--input-type=module", "--no-warnings", "-e", probe], { encoding: "utf8" });
  expect(JSON.parse(out.trim().split("\n").at(-1)!)).toEqual({ atImport: false, afterGenerating: true, generated: true });
});
