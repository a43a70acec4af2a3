// The child wing's front door: launching one child run (delegated or from a workflow's agent()),
// its slots and launch pace, and steering it while it runs. A new way to run a child hooks into
// launchChild's placement and work step, as the dbos backend does (docs/architecture.md, "Seams").
export { MAX_CHILD_TIMEOUT_MS, prepareChild } from "./prepare-child.ts";
export type { PreparedChild } from "./launch-types.ts";
export { launchChild, TOOLS_WITHHELD, type ChildCall, type LaunchedChild, type LaunchEnvironment, type SettledChild } from "./launch-child.ts";
export { resolveResume, type ResumeSource } from "./resume-source.ts";
export { availableRoles } from "./profile.ts";
export { launchTurn } from "./launch-pace.ts";
export { placeChild } from "./fleet-placement.ts";
export { backgroundLimit, backgroundQueueLimit, foregroundQueueFull, foregroundWorkflowSlots, queueFull, Slots } from "./slots.ts";
export { MAX_STEER_CHARS, steerRun, type SteerPayload } from "./steer-targets.ts";
