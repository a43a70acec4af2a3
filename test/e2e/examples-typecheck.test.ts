import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { flowToolSchemas } from "../../src/orchestrator/workflow/authoring-types.ts";
import { toolDeclaration } from "../../runtime/schema-types.ts";
import { PROJECT_ROOT } from "../support/pi-session.ts";
import { checkInMemory } from "../support/typecheck.ts";

/**
 * The codemode examples (examples/*.js and the `// example:` blocks of the docs) type-checked as
 * Pi's codemode runs them, the body of an async function, against pi-flow's four tools typed from
 * their schemas. Codemode's own `load()` returns whatever JSON was stored, so it is `any`; and
 * since the examples are the contract's, written for a model rather than a compiler, null checks
 * are off (`run.refs.final` is optional in the schema, present whenever the example reads it).
 */
async function codemodeDeclarations(): Promise<string> {
  const schemas = flowToolSchemas();
  const declarations = await Promise.all(Object.keys(schemas).sort().map((name) => toolDeclaration(name, schemas[name]!)));
  return `${declarations.flatMap((declaration) => declaration.types).join("\n\n")}
interface FlowTools {
${declarations.map((declaration) => declaration.member).join("\n")}
}
declare const tools: FlowTools;
declare function store(key: string, value: unknown): void;
declare function load(key: string): any;
declare function text(value: unknown): void;
declare const console: { log(...values: unknown[]): void };
`;
}

function typeErrors(declarations: string, scripts: Map<string, string>): string[] {
  const files = new Map([["/codemode.d.ts", declarations]]);
  for (const [name, script] of scripts) files.set(`/${name}.js`, `export {};\nasync function example() {\n${script}\n}\n`);
  const options: ts.CompilerOptions = { allowJs: true, checkJs: true, strict: true, strictNullChecks: false, noEmit: true, target: ts.ScriptTarget.ES2022, lib: ["lib.es2022.d.ts"], types: [] };
  return checkInMemory(files, options, true);
}

const examples = new Map<string, string>();
for (const file of readdirSync(join(PROJECT_ROOT, "examples")).filter((name) => name.endsWith(".js"))) {
  examples.set(file.slice(0, -3), readFileSync(join(PROJECT_ROOT, "examples", file), "utf8"));
}
for (const doc of ["docs/workflows.md", "docs/delegation.md", "docs/runs.md", "README.md"]) {
  for (const match of readFileSync(join(PROJECT_ROOT, doc), "utf8").matchAll(/```js\n(\/\/ example:([\w-]+)\n[\s\S]*?)```/g)) {
    examples.set(`${doc.replace(/\W/g, "_")}_${match[2]}`, match[1]!);
  }
}

describe("codemode examples type-check against pi-flow's tools", () => {
  it("finds the four examples/ scripts and the docs' examples", () => {
    expect([...examples.keys()].filter((name) => !name.includes("_"))).toEqual(expect.arrayContaining(["batch-inspect", "explicit-handoff", "paged-final", "typed-error"]));
    expect(examples.size).toBeGreaterThanOrEqual(8);
  });

  it("every one type-checks, and a misspelt action or field in one does not", async () => {
    const declarations = await codemodeDeclarations();
    expect(typeErrors(declarations, examples)).toEqual([]);
    const broken = new Map([["broken", examples.get("batch-inspect")!.replace('action: "inspect"', 'action: "inspcet"').replace("run.state.outcome", "run.state.outcom")]]);
    const errors = typeErrors(declarations, broken).join("\n");
    expect(errors).toMatch(/"inspcet"/);
    expect(errors).toMatch(/outcom/);
  });
});
