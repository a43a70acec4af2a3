import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { FlowError } from "../contract/errors.ts";
import { findProfileFile, parseProfileFile, profileFiles, type ChildProfile } from "./profiles.ts";
import type { ProfileDirs } from "./roles.ts";
import { agentDefinitionsFolderTrusted } from "../trust/project-trust.ts";

/**
 * Pi agent definitions, as Pi's subagent convention places them: the nearest `.pi/agents/` above
 * the working directory, and `agents/` in Pi's agent directory. A project definition wins; an
 * untrusted project's are not read, nor those of a folder above that is not trusted itself
 * (project-trust.ts).
 */
export function agentDefinitionDirs(cwd: string, agentDir: string, projectTrusted: boolean): ProfileDirs {
  const user = join(agentDir, "agents");
  if (!projectTrusted) return { project: undefined, user };
  for (let dir = cwd; ; dir = dirname(dir)) {
    const candidate = join(dir, ".pi", "agents");
    if (existsSync(candidate)) {
      if (agentDefinitionsFolderTrusted({ cwd, trusted: true }, dir, agentDir)) return { project: candidate, user };
      return { project: undefined, user, leftOut: `The agent definitions in ${candidate} are not read: that folder is not trusted; trust it with /trust in pi run there.` };
    }
    if (dirname(dir) === dir) return { project: join(cwd, ".pi", "agents"), user };
  }
}

export function resolveAgentDefinition(name: string, dirs: ProfileDirs): ChildProfile {
  for (const source of ["project", "user"] as const) {
    const path = findProfileFile(dirs[source], name);
    if (path) return { ...parseProfileFile(path, source), harness: "pi" };
  }
  const known = [...new Set([...profileFiles(dirs.user).keys(), ...profileFiles(dirs.project).keys()])].sort();
  throw new FlowError(
    "selection_invalid",
    `Unknown subagent_type "${name}". ${known.length > 0 ? `Known: ${known.join(", ")}.` : "No Pi agent definitions were found."}${dirs.leftOut ? ` ${dirs.leftOut}` : ""}`,
  );
}
