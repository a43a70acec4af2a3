import { OccurrenceCounter } from "./cassette.ts";
import type { StubSettings } from "./harness-settings.ts";
import { stoppedResult } from "./outcomes.ts";
import { childSeed, stubText, valueForSchema, type StubCall } from "./stub-values.ts";
import type { ChildRequest, ChildResult, Harness } from "./types.ts";
import { zeroUsage } from "./usage.ts";

/** The warning and diagnostic code of a run whose children the stub harness answered. */
export const STUBBED = "stubbed";

/** What a receipt's text says when it carries the warning: the model reading it must not take the answers for a model's. */
export const STUBBED_NOTE = `Warning (${STUBBED}): answered by the stub harness, generated from the outputSchema (or a text naming the call); no model said it.`;

/** The same warning on a background launch's accepted receipt: `who` ("this child", "every agent() child of this workflow") will be stubbed. */
export const stubbedAcceptedNote = (who: string): string =>
  `Warning (${STUBBED}): the stub harness will answer ${who} with a value generated from the outputSchema (or a text naming the call); no model will say it.`;

// Occurrences are counted across the process, as replay counts them, so the nth child with the
// same agent and description in a workflow run gets the same value every time.
const counter = new OccurrenceCounter();

async function answer(request: ChildRequest, settings: StubSettings): Promise<ChildResult> {
  const usage = zeroUsage();
  if (request.signal.aborted) return stoppedResult(request, usage);
  const call: StubCall = { agent: request.task.agent, description: request.task.description, occurrence: counter.next(request.task) };
  const seed = childSeed(settings.seed, call);
  request.onDiagnostic({ type: "stub", message: `answered by the stub harness (seed ${settings.seed}): no model was called` });
  request.onProgress({ usage, activity: "stubbed" });
  if (!request.outputSchema) {
    const text = stubText(call);
    request.onOutput(text);
    return { outcome: "succeeded", value: text, usage };
  }
  const generated = await valueForSchema(request.outputSchema, seed, request.signal);
  if (!generated.ok && request.signal.aborted) return stoppedResult(request, usage);
  if (!generated.ok) return { outcome: "failed", error: { code: "failed", message: generated.message }, usage };
  request.onOutput(JSON.stringify(generated.value));
  return { outcome: "succeeded", value: generated.value, usage };
}

/**
 * The stub harness: every child is answered at once with no model: a value generated from its
 * outputSchema, or a text naming the call. The workflow around it runs for real, so an author
 * tries control flow, schemas and merge steps before spending a token.
 */
export function createStubHarness(settings: StubSettings): Harness {
  return {
    name: "stub",
    async run(request) {
      return answer(request, settings);
    },
  };
}
