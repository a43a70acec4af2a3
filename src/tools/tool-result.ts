import { toToolResult, type Envelope, type FlowToolResult } from "../contract/envelope.ts";
import { redactText } from "../runs/index.ts";

/**
 * The one place a Flow tool's result is built. A rejection's message often quotes its input (a
 * path, a name, a script line), and the model and the TUI read it as it is: so a failure's
 * message, in the envelope and in the text, is redacted here, whichever tool or check wrote it.
 */
export function flowToolResult<TDetails>(envelope: Envelope<unknown, unknown>, text: string, details: TDetails): FlowToolResult<TDetails> {
  if (envelope.ok) return toToolResult(envelope, text, details);
  const error = { ...envelope.error, message: redactText(envelope.error.message).text };
  return toToolResult({ ...envelope, error }, redactText(text).text, details);
}
