// What this session can run, for external_help: the saved workflows (with their description and
// argument schema) and the roles, built in and from role files. A file that fails to parse is
// listed with its problem, so a model learns why it cannot be used.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseWorkflow, type JsonValue } from "../../runtime/index.ts";
import { BUILTIN_ROLES, roleDirs } from "../harnesses/roles.ts";
import { parseProfileFile, profileFiles } from "../harnesses/profiles.ts";
import { listSavedWorkflows, workflowDirs, type WorkflowDirs } from "./workflow-sources.ts";

export interface SavedWorkflowInfo {
  name: string;
  source: "project" | "user" | "shipped";
  description?: string;
  args?: JsonValue;
  /** Why the file cannot run; the workflow is then listed but not usable. */
  problem?: string;
}

export interface RoleInfo {
  name: string;
  source: "builtin" | "project" | "user";
  description: string;
  tools?: string[];
  problem?: string;
}

export interface Catalog {
  workflows: SavedWorkflowInfo[];
  roles: RoleInfo[];
}

const SOURCES = ["project", "user", "shipped"] as const;

function describeWorkflow(dirs: WorkflowDirs, name: string): SavedWorkflowInfo | undefined {
  for (const source of SOURCES) {
    const path = join(dirs[source], `${name}.js`);
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch {
      continue;
    }
    try {
      const { meta } = parseWorkflow(text, { origin: "saved", path });
      return { name, source, ...(meta.description ? { description: meta.description } : {}), ...(meta.args ? { args: meta.args } : {}) };
    } catch (error) {
      return { name, source, problem: error instanceof Error ? error.message : String(error) };
    }
  }
  return undefined;
}

function describeRoles(cwd: string, flowHome: string): RoleInfo[] {
  const dirs = roleDirs(cwd, flowHome);
  const roles = new Map<string, RoleInfo>();
  for (const role of Object.values(BUILTIN_ROLES)) {
    roles.set(role.name, { name: role.name, source: "builtin", description: role.description, ...(role.tools ? { tools: role.tools } : {}) });
  }
  // User files first, so a project file of the same name replaces it, as selection does.
  for (const source of ["user", "project"] as const) {
    for (const [name, path] of profileFiles(dirs[source])) {
      try {
        const profile = parseProfileFile(path, source, BUILTIN_ROLES[name]);
        roles.set(profile.name, { name: profile.name, source, description: profile.description, ...(profile.tools ? { tools: profile.tools } : {}) });
      } catch (error) {
        roles.set(name, { name, source, description: "", problem: error instanceof Error ? error.message : String(error) });
      }
    }
  }
  return [...roles.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/** Everything a model can select here, read from disk when asked (files may change between calls). */
export function readCatalog(cwd: string, flowHome: string): Catalog {
  const dirs = workflowDirs(cwd, flowHome);
  const workflows = listSavedWorkflows(dirs).flatMap((name) => describeWorkflow(dirs, name) ?? []);
  return { workflows, roles: describeRoles(cwd, flowHome) };
}
