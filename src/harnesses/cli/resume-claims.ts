import { processGlobal } from "../../../runtime/process-global.ts";

/**
 * The CLI sessions this process is continuing in place, by harness and session id. A CLI that
 * cannot fork a session on resume (codex: `exec resume` continues the thread itself) would have two
 * resumes of one run write into one thread, each seeing the other's turns: the second is refused
 * while the first runs.
 */
const continuing = processGlobal("pi-flow.cli-resumed-sessions", () => new Set<string>());

/** Claims the session for one run; undefined when another run of this process holds it. Call the returned release when the run ends. */
export function claimSession(harness: string, sessionId: string): (() => void) | undefined {
  const key = `${harness}\0${sessionId}`;
  if (continuing.has(key)) return undefined;
  continuing.add(key);
  return () => void continuing.delete(key);
}
