import { lstatSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { FlowError } from "../contract/errors.ts";
import { projectDeclarations, type RegisteredToolSchema } from "../orchestrator/workflow/index.ts";
import { readCatalog } from "../orchestrator/workflow/index.ts";
import { SHIPPED_WORKFLOWS_DIR } from "../orchestrator/workflow/index.ts";
import { listFlag, parseCommand, projectDir, shellQuote, stringFlag, TRUST_OPTIONS, trustOverride } from "./args.ts";
import { EXIT } from "./exit.ts";
import { printable } from "../runs/index.ts";
import { openHeadlessSession } from "./headless.ts";
import { flowHome } from "./project-runs.ts";
import { checkPrivateTarget, writePrivately } from "../runs/index.ts";
import { commandProjectTrust } from "./trust.ts";
import { TYPES_USAGE } from "./usage.ts";

const OPTIONS = { out: { type: "string" }, cwd: { type: "string" }, extension: { type: "string", multiple: true }, ...TRUST_OPTIONS } as const;

/** Where `flow types` writes by default: beside the project's saved workflows, which the tsconfig there checks. */
const projectTypesPath = (cwd: string): string => join(cwd, ".pi", "flow", "workflows", "flow.d.ts");


/**
 * `flow types`: declarations for the tools a session here can call (pi-flow's, Pi's built-ins, the
 * project's and user's extensions that load, any --extension) and for every saved workflow's args.
 * With the default output it also writes the shipped tsconfig.json beside it when there is none.
 */
export async function typesCommand(argv: readonly string[]): Promise<number> {
  const parsed = parseCommand(argv, OPTIONS, { min: 0, max: 0 }, TYPES_USAGE);
  const cwd = projectDir(parsed);
  const out = stringFlag(parsed, "out");
  const target = out === undefined ? projectTypesPath(cwd) : resolve(out);
  // --out names a file in a folder that exists: a typo in the path should not grow new folders.
  if (out !== undefined && statSync(dirname(target), { throwIfNoEntry: false })?.isDirectory() !== true) {
    throw new FlowError("request_invalid", `--out ${out}: the folder ${dirname(target)} does not exist; create it first or choose another path.`);
  }
  // The default files are the project's: they must stay inside it. --out is the user's own choice.
  const inside = out === undefined ? cwd : undefined;
  const tsconfig = join(dirname(target), "tsconfig.json");
  const writesTsconfig = out === undefined && lstatSync(tsconfig, { throwIfNoEntry: false }) === undefined;
  checkPrivateTarget(target, inside);
  if (out === undefined) checkPrivateTarget(tsconfig, inside);
  const extensions = listFlag(parsed, "extension").map((path) => resolve(path));
  const projectTrusted = commandProjectTrust(trustOverride(parsed), cwd, "types");
  const headless = await openHeadlessSession({ cwd, projectTrusted, extensions, ambientExtensions: true });
  let tools: RegisteredToolSchema[];
  try {
    tools = headless.callableTools();
    for (const problem of headless.extensionProblems) process.stderr.write(`flow types: an extension did not load, its tools are left out: ${printable(problem)}\n`);
  } finally {
    await headless.close();
  }
  const workflows = readCatalog(cwd, flowHome(), projectTrusted).workflows;
  for (const workflow of workflows) {
    if (workflow.problem) process.stderr.write(`flow types: workflow ${workflow.name} (${workflow.source}) is left out: ${printable(workflow.problem)}\n`);
  }
  writePrivately(target, await projectDeclarations(tools, workflows), inside);
  const shown = (path: string) => relative(process.cwd(), path) || path;
  const usable = workflows.filter((workflow) => !workflow.problem).length;
  process.stderr.write(`flow types: wrote ${shown(target)}: ${tools.length} tools, ${usable} saved workflows\n`);
  if (writesTsconfig) {
    writePrivately(tsconfig, readFileSync(join(SHIPPED_WORKFLOWS_DIR, "tsconfig.json"), "utf8"), inside);
    process.stderr.write(`flow types: wrote ${shown(tsconfig)}: type-check this folder with npx tsc -p ${shellQuote(shown(dirname(target)))}\n`);
  }
  return EXIT.succeeded;
}
