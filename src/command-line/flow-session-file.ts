import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { SessionManager } from "@earendil-works/pi-coding-agent";
import { ChildSessionFile } from "../harnesses/index.ts";
import { FLOW_SESSION_FILE, projectKey, resolveFlowHome, sessionKey, sessionsDir } from "../runs/index.ts";

/** `flow run`'s own Pi session and the redacted file that keeps it. */
export interface FlowSession {
  sessionManager: SessionManager;
  /** Writes what the session gained since the last call; a failure is said once on stderr. */
  save(): void;
}

/**
 * `flow run`'s Pi session is kept beside its runs, in the flow home
 * (`projects/<project>/sessions/<session>/flow-session.jsonl`), never in Pi's sessions directory.
 * It holds the command line and each tool call with its result, `--args` included, so it is
 * written by pi-flow, every entry redacted and the file owner-only, like a pi child's transcript.
 * It must be a persisted session all the same: `external_runs` supervises persisted sessions only
 * (contract v1), so a workflow run by `flow` can list, wait on and inspect its own runs, and
 * `pi --session <file>` can continue it.
 */
export function openFlowSession(cwd: string, agentDir: string): FlowSession {
  const sessionManager = SessionManager.inMemory(cwd);
  const id = sessionManager.getSessionId();
  const folder = join(sessionsDir(resolveFlowHome(process.env, agentDir), projectKey(cwd)), sessionKey(id));
  const path = join(folder, FLOW_SESSION_FILE);
  // Pi writes nothing of an in-memory session; naming its file makes it a persisted one for every
  // reader (supervision asks for the file), and keeping the ID keeps the runs' folder the file's.
  sessionManager.setSessionFile(path);
  sessionManager.newSession({ id });
  const file = new ChildSessionFile(sessionManager, path);
  let warned = false;
  return {
    sessionManager,
    save() {
      mkdirSync(folder, { recursive: true, mode: 0o700 });
      file.flush(() => {
        if (!warned) process.stderr.write(`flow: this command's Pi session could not be saved at ${path}; its runs are kept.\n`);
        warned = true;
      });
    },
  };
}
