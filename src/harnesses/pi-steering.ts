import type { AgentSession, AgentSessionEvent } from "@earendil-works/pi-coding-agent";
import type { AssistantMessage } from "@earendil-works/pi-ai";
import { contentText } from "../parent-context/content-text.ts";
import type { ChildRequest } from "./types.ts";

// How a pi child's parent steers it: its steers go through Pi's own queue (pi.ts runs the child).

/**
 * A steer is the parent's words, never a command: Pi expands text that starts with `/` (a skill,
 * a prompt template) and refuses an extension command's name, as it does for what a user types.
 * A space before the slash keeps the words as they are.
 */
const asWords = (message: string): string => (message.startsWith("/") ? ` ${message}` : message);

/**
 * Steers reach the child through Pi's own queue: after its active tool batch, before its next model
 * request. Every steer still unread then goes into that one request, not one request each. A steer
 * Pi took into a request that never answered (the child was stopped as it began, at its maxTurns
 * quota or a cancel) is unread all the same: the inbox notes it undelivered. Returns the unsubscribe.
 */
export function attachSteering(session: AgentSession, request: ChildRequest): () => void {
  if (!request.steering) return () => {};
  session.agent.steeringMode = "all";
  /** Steers delivered and not yet in the child's context, then those in it that no answer followed. */
  const queued: string[] = [];
  let unanswered: string[] = [];
  const unsubscribe = session.subscribe((event: AgentSessionEvent) => {
    if (event.type !== "message_start" && event.type !== "message_end") return;
    const { message } = event;
    if (event.type === "message_start" && message.role === "user") {
      const index = queued.findIndex((steer) => asWords(steer) === contentText(message.content));
      if (index >= 0) unanswered.push(...queued.splice(index, 1));
    } else if (event.type === "message_end" && message.role === "assistant") {
      const { stopReason } = message as AssistantMessage;
      if (stopReason !== "aborted" && stopReason !== "error") unanswered = []; // the model read them
    }
  });
  request.steering.attach({
    deliver: (message) => {
      queued.push(message);
      return session.steer(asWords(message), undefined, { source: "extension" }).then(() => undefined, (error: unknown) => {
        try {
          request.onDiagnostic({ type: "error", message: `A steer could not be queued: ${error instanceof Error ? error.message : String(error)}` });
        } catch {
          // The run settled meanwhile: its evidence is closed, and nothing may throw into the host.
        }
      });
    },
    unread: () => session.getSteeringMessages(),
    unanswered: () => unanswered,
  });
  return unsubscribe;
}
