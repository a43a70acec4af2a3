// What this session can run, for external_help: the saved workflows (with their description and
// argument schema) and the roles, built in and from role files. A file that fails to parse is
// listed with its problem, so a model learns why it cannot be used.
import type { JsonValue } from "../../../runtime/index.ts";
import { listRoles, resolveRole, roleDirs } from "../../harnesses/index.ts";
import { listSavedWorkflows, parseSelected, selectWorkflow, workflowDirs, type SelectedWorkflow, type WorkflowDirs } from "./sources.ts";

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

/**
 * Each saved workflow as last described, by its file's text and where it was found: every help
 * call reads every file, and parses (on Pi's thread) only one that changed. Least recently used
 * first out, past DESCRIBED_CHARS of text (a file may be a megabyte).
 */
const described = new Map<string, { info: SavedWorkflowInfo; chars: number }>();
let describedChars = 0;
const DESCRIBED_CHARS = 4 * 1024 * 1024;

function describeWorkflow(dirs: WorkflowDirs, name: string): SavedWorkflowInfo {
  const selected = selectWorkflow({ workflow: name }, dirs);
  const key = `${selected.source}\0${selected.label}\0${selected.text}`;
  const kept = described.get(key);
  if (kept !== undefined) {
    described.delete(key);
    described.set(key, kept); // now the most recently used
    return kept.info;
  }
  const info = readDescription(selected);
  described.set(key, { info, chars: key.length });
  describedChars += key.length;
  for (const [oldest, { chars }] of described) {
    if (describedChars <= DESCRIBED_CHARS) break;
    described.delete(oldest);
    describedChars -= chars;
  }
  return info;
}

function readDescription(selected: SelectedWorkflow): SavedWorkflowInfo {
  const { name } = selected;
  const source = selected.source as SavedWorkflowInfo["source"];
  try {
    // Checked whole here: a workflow listed as usable must not be refused at launch.
    const { meta } = parseSelected(selected, { checkArgsSchema: true });
    return { name, source, ...(meta.description ? { description: meta.description } : {}), ...(meta.args ? { args: meta.args } : {}) };
  } catch (error) {
    return { name, source, problem: error instanceof Error ? error.message : String(error) };
  }
}

/** Every role selection can reach here, resolved exactly as selection resolves it. */
function describeRoles(cwd: string, flowHome: string, projectTrusted: boolean): RoleInfo[] {
  const dirs = roleDirs(cwd, flowHome, projectTrusted);
  return listRoles(dirs).map((name): RoleInfo => {
    try {
      const role = resolveRole(name, dirs);
      return { name: role.name, source: role.source, description: role.description, ...(role.tools ? { tools: role.tools } : {}) };
    } catch (error) {
      return { name, source: "project", description: "", problem: error instanceof Error ? error.message : String(error) };
    }
  });
}

/**
 * Everything a model can select here, read from disk when asked (files may change between calls).
 * Each list is read only when it is used: help asks for one topic at a time.
 */
export function readCatalog(cwd: string, flowHome: string, projectTrusted: boolean): Catalog {
  return {
    get workflows() {
      const dirs = workflowDirs(cwd, flowHome, projectTrusted);
      return listSavedWorkflows(dirs).map((name) => describeWorkflow(dirs, name));
    },
    get roles() {
      return describeRoles(cwd, flowHome, projectTrusted);
    },
  };
}
