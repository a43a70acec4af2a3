// Shared test helpers: run an inline script against a scripted host, collecting events.
import { parseWorkflow, runWorkflow } from "../../runtime/index.ts";
import type { AgentOptions, AgentResult, RunWorkflowOptions, WorkflowEvent, WorkflowHost, WorkflowResult } from "../../runtime/index.ts";

export interface Ran {
  result: WorkflowResult;
  events: WorkflowEvent[];
}

/** An agent host that answers every call with the prompt echoed back. */
export const echoAgent = async (options: AgentOptions): Promise<AgentResult> => ({
  runId: `run-${options.prompt}`,
  output: `did ${options.prompt}`,
  value: `did ${options.prompt}`,
});

export function hostError(message: string, fields: { code?: string; runId?: string; fatal?: boolean }): Error {
  return Object.assign(new Error(message), fields);
}

export async function run(
  source: string,
  options: Partial<Omit<RunWorkflowOptions, "host">> & { host?: Partial<WorkflowHost> } = {},
): Promise<Ran> {
  const events: WorkflowEvent[] = [];
  const workflow = parseWorkflow(source, { origin: "inline" });
  const result = await runWorkflow(workflow, {
    ...options,
    host: { agent: echoAgent, ...options.host },
    onEvent: (event) => {
      events.push(event);
      options.onEvent?.(event);
    },
  });
  return { result, events };
}

/** Narrows a result to success, failing the test with the error otherwise. */
export function value(result: WorkflowResult): unknown {
  if (!result.ok) throw new Error(`expected success, got ${JSON.stringify(result.error)}`);
  return result.value;
}

export function failure(result: WorkflowResult) {
  if (result.ok) throw new Error(`expected failure, got ${JSON.stringify(result.value)}`);
  return result.error;
}

/** A child that starts at once and answers only when `gate` is resolved: calls pile up behind it. */
export function slowChild(): { gate: { promise: Promise<void>; resolve: () => void }; agent: (options: AgentOptions) => Promise<AgentResult>; started: () => number } {
  const gate = deferred<void>();
  let started = 0;
  const agent = async (options: AgentOptions): Promise<AgentResult> => {
    started++;
    await gate.promise;
    return { runId: `r${started}`, output: "ok", value: options.prompt.length };
  };
  return { gate, agent, started: () => started };
}

/** A promise with its resolver, for hosts that answer when the test says so. */
export function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve: (value: T) => void = () => {};
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}
