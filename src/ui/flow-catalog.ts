/**
 * `/flow workflows` and `/flow roles`: what this project can run, read from the same folders the
 * tools use, each with where it came from. A file that fails to parse is listed with its error.
 */
import { agentDefinitionDirs } from "../harnesses/agent-definitions.ts";
import { parseProfileFile, profileFiles } from "../harnesses/profiles.ts";
import { BUILTIN_ROLES, listRoles, resolveRole, roleDirs, type ProfileDirs } from "../harnesses/roles.ts";
import { listSavedWorkflows, parseSelected, selectWorkflow, type WorkflowDirs } from "../orchestrator/workflow-sources.ts";
import { oneLine } from "./format.ts";

function errorText(error: unknown): string {
  return oneLine(error instanceof Error ? error.message : String(error));
}

export function workflowLines(dirs: WorkflowDirs): string[] {
  const names = listSavedWorkflows(dirs);
  if (names.length === 0) return ["No saved workflows."];
  const lines: string[] = [];
  for (const name of names) {
    try {
      const selected = selectWorkflow({ workflow: name }, dirs);
      const parsed = parseSelected(selected);
      const meta = parsed.meta as { description?: string; args?: unknown };
      lines.push(`${name} (${selected.source})${meta.description ? `: ${oneLine(meta.description)}` : ""}`);
      if (meta.args !== undefined) lines.push(`  args: ${JSON.stringify(meta.args)}`);
    } catch (error) {
      lines.push(`${name}: does not parse: ${errorText(error)}`);
    }
  }
  return lines;
}

export function roleLines(cwd: string, flowHome: string): string[] {
  const dirs = roleDirs(cwd, flowHome);
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
export function brokenProfiles(cwd: string, flowHome: string, agentDir: string): string[] {
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
  check(roleDirs(cwd, flowHome), "role");
  check(agentDefinitionDirs(cwd, agentDir), "agent");
  return broken;
}
