import { printsASecret, redactPrintedOutput } from "./printed.ts";

/**
 * A secret a command printed, in the tool result that holds its output: Pi (and the models' APIs)
 * keep a call (`bash({"command": "vault kv get -field=password secret/db"})`) in the assistant's
 * message and its output in a `toolResult` message of its own, so no rule sees the command beside
 * the password. This reads a conversation's messages in order, remembers the calls whose command
 * prints a secret (printed.ts), and redacts that secret in their results. One instance per
 * conversation: a result may be written long after its call (a session file flushed turn by turn).
 */
export class PrintedSecretResults {
  /**
   * The commands of calls whose command prints a secret and whose result is not read yet, by call
   * id: each goes once its result is read, so a long session keeps only the calls in flight.
   */
  private readonly commands = new Map<string, string>();
  /**
   * Results read, by message, as they were kept: a result read again (a checkpoint write retried
   * after it failed reads the same entries) is kept alike though its call was let go. Weak: it
   * goes with the message.
   */
  private readonly answered = new WeakMap<object, object>();

  /** How many calls wait for their result (a test's measure of what a conversation holds). */
  pendingCalls(): number {
    return this.commands.size;
  }

  /**
   * `message` (a Pi message: an assistant's, a tool result, a user's `!` command) as it should be
   * kept: itself, or a copy whose output lost the secret its command printed.
   */
  message<T>(message: T): T {
    if (message === null || typeof message !== "object") return message;
    const fields = message as Record<string, unknown>;
    if (fields.role === "assistant" && Array.isArray(fields.content)) {
      for (const part of fields.content as unknown[]) this.noteCall(part);
      return message;
    }
    if (fields.role === "toolResult" && typeof fields.toolCallId === "string") {
      const kept = this.answered.get(fields);
      if (kept !== undefined) {
        this.commands.delete(fields.toolCallId); // its call, noted again as the same entries were read again
        return kept as T;
      }
      const command = this.commands.get(fields.toolCallId);
      if (command === undefined || !Array.isArray(fields.content)) return message;
      // A later call may be given the same id (some providers number calls per turn): it is judged by its own command.
      this.commands.delete(fields.toolCallId);
      const content = (fields.content as unknown[]).map((part) => withText(part, (text) => redactPrintedOutput(command, text)));
      const result = content.every((part, i) => part === (fields.content as unknown[])[i]) ? message : ({ ...fields, content } as T);
      this.answered.set(fields, result as object);
      return result;
    }
    if (fields.role === "bashExecution" && typeof fields.command === "string" && typeof fields.output === "string") {
      const output = redactPrintedOutput(fields.command, fields.output);
      return output === fields.output ? message : ({ ...fields, output } as T);
    }
    return message;
  }

  /** A session entry (`{ type: "message", message }`) as it should be kept (see `message`). */
  entry<T>(entry: T): T {
    if (entry === null || typeof entry !== "object") return entry;
    const fields = entry as Record<string, unknown>;
    if (fields.type !== "message") return entry;
    const message = this.message(fields.message);
    return message === fields.message ? entry : ({ ...fields, message } as T);
  }

  private noteCall(part: unknown): void {
    if (part === null || typeof part !== "object") return;
    const call = part as { type?: unknown; id?: unknown; arguments?: unknown };
    if (call.type !== "toolCall" || typeof call.id !== "string" || call.arguments === null || typeof call.arguments !== "object") return;
    const command = (call.arguments as Record<string, unknown>).command;
    // Only a call whose output is judged is remembered: a conversation of a thousand calls keeps few.
    // A call that prints none forgets an earlier call of its id whose result never came.
    if (typeof command === "string" && printsASecret(command)) this.commands.set(call.id, command);
    else this.commands.delete(call.id);
  }
}

/** A content part with its text changed by `change`, or the part itself when it holds no text or `change` left it. */
function withText(part: unknown, change: (text: string) => string): unknown {
  if (part === null || typeof part !== "object") return part;
  const text = (part as { type?: unknown; text?: unknown }).text;
  if ((part as { type?: unknown }).type !== "text" || typeof text !== "string") return part;
  const changed = change(text);
  return changed === text ? part : { ...part, text: changed };
}
