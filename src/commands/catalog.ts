/**
 * `/flow workflows` and `/flow roles`: what this project can run, read from the same folders the
 * tools use, each with where it came from. A file that fails to parse is listed with its error.
 */
import { agentDefinitionDirs, parseProfileFile, profileFiles, BUILTIN_ROLES, listRoles, resolveRole, roleDirs, type ProfileDirs } from "../harnesses/index.ts";
import { readCatalog } from "../orchestrator/workflow/index.ts";
import { argumentLines, oneLine } from "../ui/index.ts";

function errorText(error: unknown): string {
  return oneLine(error instanceof Error ? error.message : String(error));
}

/** The saved workflows, as external_help's workflows topic lists them (one catalog for both). */
export function workflowLines(cwd: string, flowHome: string, projectTrusted: boolean): string[] {
  const workflows = readCatalog(cwd, flowHome, projectTrusted).workflows;
  if (workflows.length === 0) return ["No saved workflows."];
  return workflows.flatMap((workflow) => {
    if (workflow.problem) return [`${workflow.name}: does not parse: ${oneLine(workflow.problem)}`];
    const head = `${workflow.name} (${workflow.source})${workflow.description ? `: ${oneLine(workflow.description)}` : ""}`;
    return [head, ...argumentLines(workflow.args)];
  });
}

export function roleLines(cwd: string, flowHome: string, projectTrusted: boolean): string[] {
  const dirs = roleDirs(cwd, flowHome, projectTrusted);
  const lines: string[] = [];
  for (const name of listRoles(dirs)) {
    try {
      const role = resolveRole(name, dirs);
      const extra = [role.harness ? `harness ${role.harness}` : "", role.model ? `model ${role.model}` : "", role.tools ? `tools ${role.tools.join(", ")}` : "pi's default tools", `context ${role.defaultContext.mode}`];
      lines.push(`${name} (${role.source}): ${oneLine(role.description)}`);
      lines.push(`  ${extra.filter(Boolean).join(" · ")}`);
    } catch (error) {
      lines.push(`${name}: does not parse: ${errorText(error)}`);
    }
  }
  return lines;
}

/** Role and agent definition files that fail to parse, as "file: reason". */
export function brokenProfiles(cwd: string, flowHome: string, agentDir: string, projectTrusted: boolean): string[] {
  const broken: string[] = [];
  const check = (dirs: ProfileDirs, kind: string) => {
    for (const source of ["project", "user"] as const) {
      for (const [name, path] of profileFiles(dirs[source])) {
        try {
          parseProfileFile(path, source, Object.hasOwn(BUILTIN_ROLES, name) ? BUILTIN_ROLES[name] : undefined);
        } catch (error) {
          broken.push(`${kind} ${path}: ${errorText(error)}`);
        }
      }
    }
  };
  check(roleDirs(cwd, flowHome, projectTrusted), "role");
  check(agentDefinitionDirs(cwd, agentDir, projectTrusted), "agent");
  return broken;
}
