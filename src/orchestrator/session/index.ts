// The session wing's front door: one Pi session's services (its host, settings, state, result
// ownership, waits and live progress), as the tools, the ui and the `/flow` command reach them.
export { COMPLETION_MESSAGE_TYPE, COMPLETIONS_MESSAGE_TYPE, FlowHost } from "./flow-host.ts";
export { harnessStateIn, settingValue, type FlowSettingsInput, type SessionSettings, type SettingRead } from "./session-settings.ts";
export { forgetProgress, liveProgress, noteProgress, type LiveProgress } from "./live-progress.ts";
export type { ResultOwnership } from "./ownership.ts";
export { DEFAULT_WAIT_BYTES, MAX_WAIT_TARGETS, waitForRuns } from "./wait.ts";
export { stubbedRunIds, stubbedRunsNote } from "./stubbed-runs.ts";
