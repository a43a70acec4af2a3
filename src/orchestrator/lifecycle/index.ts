// The run lifecycle's front door: startRun, the one owner of a run's creation, cancellation,
// time limit, slot, settle and cleanup.
export { startRun, type RunLifecycle, type SlotQueue, type StartedRun } from "./start-run.ts";
