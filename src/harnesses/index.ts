/**
 * The harnesses' front door: what runs a child (Pi in-process, the claude and codex CLIs, replay of
 * a cassette, the stub) and what describes one (profiles, roles, agent definitions, usage,
 * steering, outcomes). Code outside src/harnesses/ imports from here; modules inside import each
 * other directly.
 */
export { agentDefinitionDirs, resolveAgentDefinition } from "./agent-definitions.ts";
export { REPLAY_MODES, formatLine, inspectCassette, readCassetteText, recordedHeader, strictProblems, stubHeader } from "./cassette.ts";
export type { CassetteHeader, ReplayMode } from "./cassette.ts";
export { inChildSessionContext } from "./child-context.ts";
export { boundChildTools, writes } from "./child-tools.ts";
export type { ChildTools } from "./child-tools.ts";
export { childEnvironment } from "./cli/env.ts";
export { isCliHarness, resumesInPlace } from "./cli/index.ts";
export { createHarness } from "./create-harness.ts";
export { resolveHarnessSettings } from "./harness-settings.ts";
export type { FlowHarnessSettingsInput, HarnessSettings } from "./harness-settings.ts";
export { childTimeout, stoppedByTimeout, unreadBecause } from "./outcomes.ts";
export { outputSchemaProblem } from "./output-schema-problem.ts";
export { checkInWorker } from "./schema-worker.ts";
export { stoppedCheck } from "./schema-stops.ts";
export type { SchemaCheck } from "./schema-worker.ts";
export { continuedSession } from "./pi-continue.ts";
export { ChildSessionFile, TRANSCRIPT_MAX_BYTES } from "./pi-session-file.ts";
export { parseProfileFile, profileFiles } from "./profiles.ts";
export type { ChildProfile } from "./profiles.ts";
export type { ChildQuotas } from "./quotas.ts";
export { chooseHarness, harnessState } from "./registry.ts";
export { loadCassette } from "./replay.ts";
export { BUILTIN_ROLES, listRoles, resolveRole, roleDirs } from "./roles.ts";
export type { ProfileDirs } from "./roles.ts";
export { SharedResources } from "./shared-resources.ts";
export { STEER_UNDELIVERED, SteeringInbox, noteUndeliveredSteer } from "./steering.ts";
export type { SteerVerdict } from "./steering.ts";
export { STUBBED, STUBBED_NOTE, stubbedAcceptedNote } from "./stub.ts";
export type { ChildDiagnostic, ChildModel, ChildProgress, ChildRequest, ChildResult, ChildTask, ChildUsage, Harness, HarnessState, SessionCheckpoint } from "./types.ts";
export { addUsage, toPiUsage, zeroUsage } from "./usage.ts";
export type { UsageTotals } from "./usage.ts";
