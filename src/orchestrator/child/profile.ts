import { FlowError } from "../../contract/errors.ts";
import { agentDefinitionDirs, resolveAgentDefinition, isCliHarness, listRoles, resolveRole, roleDirs, type ChildProfile, type SharedResources } from "../../harnesses/index.ts";
import { needsTrustDecision, TRUST_HINT } from "../../trust/project-trust.ts";
import type { ResumeSource } from "./resume-source.ts";

interface ProfilePlace {
  cwd: string;
  agentDir: string;
  flowUserDir: string;
  /** An untrusted project's role files and agent definitions are not read (project-trust.ts). */
  projectTrusted: boolean;
  /** The loads this child shares with its siblings of one parent turn: its profile is selected once there. */
  sharedResources?: SharedResources;
}

/**
 * The profile a call selects: its role, or its Pi agent definition. An unknown name in an
 * untrusted project that holds such files says why they were not read, and how to trust it.
 */
export function selectProfile(call: { role?: string; subagent_type?: string }, place: ProfilePlace): ChildProfile {
  const shared = place.sharedResources;
  if (shared === undefined) return readProfile(call, place);
  const key = JSON.stringify([call.subagent_type ?? null, call.role ?? null, place.cwd, place.agentDir, place.flowUserDir, place.projectTrusted]);
  return shared.profile(key, () => readProfile(call, place));
}

/** The roles a call at `place` can select (built in, the user's and, when trusted, the project's). */
export const availableRoles = (place: Omit<ProfilePlace, "agentDir" | "sharedResources">): string[] => listRoles(roleDirs(place.cwd, place.flowUserDir, place.projectTrusted));

function readProfile(call: { role?: string; subagent_type?: string }, place: ProfilePlace): ChildProfile {
  try {
    return call.subagent_type !== undefined
      ? resolveAgentDefinition(call.subagent_type, agentDefinitionDirs(place.cwd, place.agentDir, place.projectTrusted))
      : resolveRole(call.role!, roleDirs(place.cwd, place.flowUserDir, place.projectTrusted));
  } catch (error) {
    if (place.projectTrusted || !(error instanceof FlowError) || error.code !== "selection_invalid" || !needsTrustDecision(place.cwd)) throw error;
    throw new FlowError("selection_invalid", `${error.message} This project is not trusted, so its role files and agent definitions are not read; ${TRUST_HINT}.`);
  }
}

/**
 * Whether the child runs isolated (tool-calling contract 14.3): asked for by the call or by its
 * profile. A CLI child loads its own tool's configuration, which pi-flow cannot narrow to nothing.
 */
export function childIsolation(call: { isolated?: boolean }, profile: ChildProfile, harness: string): boolean {
  const isolated = call.isolated === true || profile.isolated === true;
  if (isolated && isCliHarness(harness)) {
    throw new FlowError("request_invalid", `isolated runs on the pi harness only; the ${harness} harness loads its own configuration.`);
  }
  return isolated;
}

/**
 * The harness a call asks for: the call's, else its profile's, else pi. A resumed child runs where
 * the earlier run ran; asking for another harness is a contradiction.
 */
export function askedHarness(call: { harness?: string; subagent_type?: string }, profile: ChildProfile, resume: ResumeSource | undefined): string {
  if (!resume) return call.harness ?? profile.harness ?? "pi";
  if (call.harness !== undefined && call.harness !== resume.harness) {
    throw new FlowError("request_invalid", `Run ${resume.runId} ran on the ${resume.harness} harness; resume it there (leave harness out).`);
  }
  if (call.subagent_type !== undefined && resume.harness !== "pi") {
    throw new FlowError("request_invalid", `Run ${resume.runId} ran on the ${resume.harness} harness; subagent_type always runs on pi.`);
  }
  return resume.harness;
}
