import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { getAgentDir } from "@earendil-works/pi-coding-agent";
import { agentDefinitionDirs } from "../harnesses/agent-definitions.ts";
import { profileFiles } from "../harnesses/profiles.ts";
import { listRoles, roleDirs } from "../harnesses/roles.ts";
import { listSavedWorkflows, workflowDirs } from "../orchestrator/workflow-sources.ts";
import { CHECK_USAGE } from "./usage.ts";
import { listFlag, parseCommand, projectDir, TRUST_OPTIONS, trustOverride } from "./args.ts";
import { commandProjectTrust } from "./trust.ts";
import { EXIT } from "./exit.ts";
import { flowHome } from "./project-runs.ts";
import type { HeadlessSession } from "./headless.ts";
import { literalTargetProblems, type KnownNames } from "./named-targets.ts";
import { checkWorkflowSource, formatProblem, requestedTools, type Problem } from "./script-check.ts";

const OPTIONS = { cwd: { type: "string" }, extension: { type: "string", multiple: true }, ...TRUST_OPTIONS } as const;

/**
 * Parses and validates workflow files without running them. Prints `file:line:column: message` per
 * problem on stdout; exit 2 when there is any. `meta.tools` is checked against the tools a `flow`
 * session can call (pi-flow's, Pi's built-ins and any `--extension`), so a session is opened only
 * when some file names tools.
 */
export async function checkCommand(argv: readonly string[]): Promise<number> {
  const parsed = parseCommand(argv, OPTIONS, { min: 1, max: Number.MAX_SAFE_INTEGER, missing: "the <path.js> of at least one workflow to check" }, CHECK_USAGE);
  const cwd = projectDir(parsed);
  const extensions = listFlag(parsed, "extension").map((path) => resolve(path));
  const projectTrusted = commandProjectTrust(trustOverride(parsed), cwd, "check");
  let headless: HeadlessSession | undefined;
  let tools: string[] | undefined;
  const callableTools = (): readonly string[] => {
    if (!tools) throw new Error("callable tools are read before they are loaded");
    return tools;
  };
  const problems: Problem[] = [];
  let known: KnownNames | undefined;
  try {
    for (const file of parsed.positionals) {
      let source: string;
      try {
        source = readFileSync(resolve(file), "utf8");
      } catch (error) {
        problems.push({ file, line: 1, column: 1, message: `cannot be read (${(error as NodeJS.ErrnoException).code ?? "error"})` });
        continue;
      }
      // A session costs a few hundred milliseconds: open one only for a file that names tools.
      if (!tools && requestedTools(source).length > 0) {
        const { openHeadlessSession } = await import("./headless.ts");
        headless = await openHeadlessSession({ cwd, projectTrusted, extensions });
        tools = headless.callableToolNames();
      }
      const checked = checkWorkflowSource(source, file, tools ? callableTools : () => []);
      problems.push(...checked.problems);
      if (checked.workflow) problems.push(...literalTargetProblems(source, file, (known ??= knownNames(cwd, projectTrusted))));
    }
  } finally {
    headless?.dispose();
  }
  for (const problem of problems) process.stdout.write(`${formatProblem(problem)}\n`);
  const files = parsed.positionals.length;
  process.stderr.write(problems.length === 0 ? `flow check: ${files} file${files === 1 ? "" : "s"} ok\n` : `flow check: ${problems.length} problem${problems.length === 1 ? "" : "s"}\n`);
  return problems.length === 0 ? EXIT.succeeded : EXIT.refused;
}

/** The roles, agent definitions and saved workflows a run in this project could name. */
function knownNames(cwd: string, projectTrusted: boolean): KnownNames {
  const home = flowHome();
  const agents = agentDefinitionDirs(cwd, getAgentDir(), projectTrusted);
  return {
    roles: listRoles(roleDirs(cwd, home, projectTrusted)),
    agents: [...new Set([...profileFiles(agents.user).keys(), ...profileFiles(agents.project).keys()])],
    workflows: listSavedWorkflows(workflowDirs(cwd, home, projectTrusted)),
  };
}
