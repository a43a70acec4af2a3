import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { FlowError } from "../contract/errors.ts";
import { findProfileFile, parseProfileFile, profileFiles, type ChildProfile } from "./profiles.ts";
import type { ProfileDirs } from "./roles.ts";

/**
 * Pi agent definitions, as Pi's subagent convention places them: the nearest `.pi/agents/` above
 * the working directory, and `agents/` in Pi's agent directory. A project definition wins; an
 * untrusted project's are not read (project-trust.ts).
 */
export function agentDefinitionDirs(cwd: string, agentDir: string, projectTrusted: boolean): ProfileDirs {
  const user = join(agentDir, "agents");
  if (!projectTrusted) return { project: undefined, user };
  let dir = cwd;
  let project = join(cwd, ".pi", "agents");
  for (;;) {
    const candidate = join(dir, ".pi", "agents");
    if (existsSync(candidate)) {
      project = candidate;
      break;
    }
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return { project, user };
}

export function resolveAgentDefinition(name: string, dirs: ProfileDirs): ChildProfile {
  for (const source of ["project", "user"] as const) {
    const path = findProfileFile(dirs[source], name);
    if (path) return { ...parseProfileFile(path, source), harness: "pi" };
  }
  const known = [...new Set([...profileFiles(dirs.user).keys(), ...profileFiles(dirs.project).keys()])].sort();
  throw new FlowError(
    "selection_invalid",
    `Unknown subagent_type "${name}". ${known.length > 0 ? `Known: ${known.join(", ")}.` : "No Pi agent definitions were found."}`,
  );
}
