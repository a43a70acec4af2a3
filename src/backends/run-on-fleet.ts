import { relative, sep } from "node:path";
import { noteUndeliveredSteer, STEER_UNDELIVERED, unreadBecause, type ChildRequest, type ChildResult, type Harness, type SteerVerdict } from "../harnesses/index.ts";
import type { RunWriter } from "../runs/index.ts";
import { requeuedActivity, WAITING_FOR_WORKER } from "../contract/child-entry.ts";
import type { Requeue } from "./folder-refusals.ts";
import type { FleetChildren } from "./fleet.ts";

export type { FleetChildren } from "./fleet.ts";
import type { RemoteChildRequest, RemoteChildResult } from "./remote-child.ts";
import { keepWorkerSession, notKeptMessage, SESSION_NOT_KEPT } from "./kept-session.ts";
import { fleetUnread } from "./fleet-unread.ts";

export interface FleetChildPlace {
  workflowId: string;
  harness: string;
  model: string | null;
  /** The coordinator's project: the child's folder travels relative to it. */
  projectCwd: string;
  /** The coordinator's span of the child's run (W3C traceparent), when it traces: the worker's spans join its trace. */
  traceparent?: string | undefined;
  /** The line of work the child's run belongs to: the worker's spans carry it, as the coordinator's do. */
  correlationId?: string | undefined;
  /** The child's run: `queued` until a worker takes it, then told which worker ran it, in its journal and diagnostics. */
  writer: Pick<RunWriter, "runId" | "journal" | "appendDiagnostic" | "markRunning" | "markQueued">;
}

/** The child's folder as a path inside the project, `.` for the project itself; a folder outside it cannot travel. */
function projectRelative(projectCwd: string, cwd: string): string {
  const inside = relative(projectCwd, cwd);
  if (inside === "") return ".";
  if (inside.startsWith(`..${sep}`) || inside === "..") throw new Error(`the child's cwd ${cwd} is outside the project, which a worker cannot map onto its own checkout`);
  return inside;
}

/**
 * Runs one prepared child on the fleet instead of a harness in this process. The worker's output
 * and diagnostics reach the child's run here, through the same callbacks a local harness calls, so
 * the run's evidence (redacted, paged, integrity-checked) is written by the coordinator as always.
 */
export async function runOnFleet(fleet: FleetChildren, place: FleetChildPlace, request: ChildRequest): Promise<ChildResult> {
  const remote: RemoteChildRequest = {
    workflowId: place.workflowId,
    runId: place.writer.runId,
    harness: place.harness,
    model: place.model,
    profile: request.profile,
    task: request.task,
    prompt: request.prompt,
    cwd: projectRelative(place.projectCwd, request.cwd),
    loading: request.loading,
    ...(request.outputSchema ? { outputSchema: request.outputSchema } : {}),
    ...(request.quotas ? { quotas: request.quotas } : {}),
    ...(place.traceparent ? { traceparent: place.traceparent } : {}),
    ...(place.correlationId ? { correlationId: place.correlationId } : {}),
  };
  // A steer goes through the database to the worker that runs the child (steers.ts); what the child
  // has not read is asked of the database, so the bound on unread steers holds here too.
  const sending: SteersSent = { pending: new Set(), any: false };
  const unread = fleetUnread(() => fleet.unreadSteers(place.workflowId));
  request.steering?.attach({
    confirms: true,
    deliver: (message) => {
      const sent = fleet.steer(place.workflowId, message).then(
        (written): SteerVerdict | undefined => {
          if (!written) return { ended: true };
          unread.written(message);
          return undefined;
        },
        (error: unknown): SteerVerdict => ({
          refused: `The database did not take the steer (${error instanceof Error ? error.message : String(error)}): nothing was delivered. Steer again once it answers.`,
        }),
      );
      sending.any = true;
      sending.pending.add(sent);
      void sent.finally(() => sending.pending.delete(sent));
      return sent;
    },
    unread: () => unread.unread(),
  });
  const noUsage = { turns: 0, toolCalls: 0, inputTokens: 0, outputTokens: 0 };
  request.onProgress({ usage: noUsage, activity: WAITING_FOR_WORKER });
  let running = false;
  let answered = false;
  const taken = (worker: string) => {
    if (running || answered || request.signal.aborted) return;
    running = true;
    place.writer.markRunning();
    request.onProgress({ usage: noUsage, activity: `running on ${worker}` });
  };
  // A worker that took it gave it back (its folder is missing there, it stopped or went silent):
  // the run is queued again, and says why, until the next worker takes it.
  const requeued = ({ why, brief }: Requeue) => {
    if (!running || answered || request.signal.aborted) return;
    running = false;
    place.writer.markQueued();
    place.writer.journal({ t: "event", name: "requeued", data: { why } });
    place.writer.appendDiagnostic({ level: "warn", code: "requeued", message: `queued again: ${why}` });
    request.onProgress({ usage: noUsage, activity: requeuedActivity(brief) });
  };
  const notKept = (message: string) => place.writer.appendDiagnostic({ level: "warn", code: SESSION_NOT_KEPT, message });
  let answer: RemoteChildResult;
  try {
    answer = await fleet.run(remote, request.signal, taken, requeued);
  } catch (error) {
    answered = true;
    const why = request.signal.aborted ? "the child was stopped before its worker answered" : "its worker's answer never arrived";
    // No answer, so no session to take: its worker deletes that of a cancelled child, the sweep any other.
    if (request.session) notKept(notKeptMessage(undefined, why));
    // The worker may hold steers still: handed to the child (saved with its session) or on their
    // way to it. It puts them back only once it has stopped the child, after this run settled and
    // no coordinator looks: so what the child had not read is said now, as the database shows it.
    while (sending.pending.size > 0) await Promise.all([...sending.pending]);
    const held = sending.any ? await unread.closeStopped() : [];
    unread.close();
    await reportUnreadSteers(fleet, place, request, sending, `${why}, and it had not read it`, { held, ask: sending.any, noteUnreadable: true });
    throw error;
  }
  unread.close();
  // The database just answered: what waits there is taken even when this process sent no steer (a
  // coordinator that restarted and resumed the run while the child ran, whose steers the user sent to the earlier one).
  const why = unreadBecause(answer.result, "the child answered before it read it, or its harness on the worker takes no steers");
  await reportUnreadSteers(fleet, place, request, sending, why, { ask: true, noteUnreadable: sending.any });
  taken(answer.worker); // a child that settled between two looks at the queue ran all the same
  answered = true;
  place.writer.journal({ t: "event", name: "worker", data: { worker: answer.worker } });
  place.writer.appendDiagnostic({ level: "info", code: "worker", message: `ran on worker ${answer.worker}` });
  for (const text of answer.output) request.onOutput(text);
  for (const entry of answer.diagnostics) request.onDiagnostic(entry);
  // A pi child's session is kept in its run, as a local child's is, so a later resume continues it here.
  if (request.session) {
    await keepWorkerSession(fleet, { workflowId: place.workflowId, worker: answer.worker, file: request.session.file, cwd: request.cwd, notKept }, answer.session);
  }
  request.onProgress({ usage: answer.result.usage, activity: `done on ${answer.worker}` });
  return answer.result;
}

/** The steers this coordinator sent a child: those still being written, and whether it sent any. */
interface SteersSent {
  pending: Set<Promise<unknown>>;
  any: boolean;
}

/** How a settled child's steers are reported. */
interface UnreadReport {
  /** The steers a stopped child had not read as the database showed them. */
  held?: readonly string[];
  /**
   * Whether the database is asked for steers still waiting: a child stopped that this process never
   * steered does not wait on it (a cancel during an outage).
   */
  ask: boolean;
  /** Whether a database that cannot be read is noted: not for a child this process never steered. */
  noteUnreadable: boolean;
}

/**
 * Once the child's answer is in, no worker hands it a steer: later steers answer `terminal`, and
 * those still in the database (sent as it ended, or put back by a worker that could not hand them
 * over) are noted in the run's evidence as not delivered, instead of waiting there for no one.
 * `held` (those still in the table among them) are noted first; those taken from the table now that
 * it does not hold are added after them.
 */
async function reportUnreadSteers(fleet: FleetChildren, place: FleetChildPlace, request: ChildRequest, sending: SteersSent, why: string, report: UnreadReport): Promise<void> {
  const held = report.held ?? [];
  if (!request.steering) return;
  while (sending.pending.size > 0) await Promise.all([...sending.pending]);
  request.steering.close();
  // What the inbox kept as unread at its close (a stopped child's, from the last look) is said here,
  // from the database's latest word, once: not again by the run's own note of its inbox.
  request.steering.undelivered.splice(0);
  if (!report.ask) return;
  // Noted inside the take: the rows go only once their notes are written.
  let noting = false;
  const note = (left: readonly string[]) => {
    noting = true;
    const shown = [...held];
    const taken = left.filter((message) => {
      const index = shown.indexOf(message);
      if (index < 0) return true;
      shown.splice(index, 1);
      return false;
    });
    for (const message of [...held, ...taken]) noteUndeliveredSteer(place.writer, why, message);
  };
  try {
    await fleet.takeUndeliveredSteers(place.workflowId, note);
  } catch (error) {
    if (noting) throw error; // the run's own writer failed: not the database
    for (const message of held) noteUndeliveredSteer(place.writer, why, message);
    if (!report.noteUnreadable) return;
    place.writer.appendDiagnostic({ level: "warn", code: STEER_UNDELIVERED, message: `steers sent to this child may not have been delivered: the database could not be read (${error instanceof Error ? error.message : String(error)})` });
  }
}

/** The fleet as a harness: what a launch runs a workflow child on when the dbos backend is chosen. */
export function fleetHarness(fleet: FleetChildren, place: FleetChildPlace): Harness {
  return { name: place.harness, run: (request) => runOnFleet(fleet, place, request) };
}
