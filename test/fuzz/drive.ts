// Drives mutated inputs through a real Pi session, as a model would call the tools (many calls in
// one assistant message), and sorts every result: a contract envelope, Pi's own validation
// refusal before execute, or anything else, which is a defect ("untyped").
import { ERROR_CODES } from "../../src/contract/errors.ts";
import type { PiTestSession, ToolOutcome } from "../support/pi-session.ts";
import { mutatedInput, prng } from "./inputs.ts";

export const FUZZ_TOOLS = ["external_delegate", "external_workflow", "external_runs", "external_help"] as const;

export interface Tally {
  tool: string;
  cases: number;
  ok: number;
  /** ok: false with a code of the contract's closed set. */
  typed: number;
  /** Refused by Pi's schema validation before execute ran (the contract's predispatch failure). */
  refused: number;
  /** Anything else: a thrown error, an envelope with an unknown code, a message naming a host path. */
  untyped: Array<{ input: unknown; text: string }>;
  unhandledRejections: number;
}

const RUN_ID = /\b(?:ag|wf)_[0-9a-z]{9}_[0-9a-z]{10}\b/g;

function classify(outcome: ToolOutcome, hostPaths: readonly string[]): "ok" | "typed" | "refused" | "untyped" {
  const envelope = outcome.structuredContent as { ok?: unknown; error?: { code?: unknown; message?: unknown } } | undefined;
  if (envelope && typeof envelope.ok === "boolean") {
    if (envelope.ok) return outcome.isError ? "untyped" : "ok";
    const code = envelope.error?.code;
    const message = String(envelope.error?.message ?? "");
    if (typeof code !== "string" || !Object.hasOwn(ERROR_CODES, code) || !outcome.isError) return "untyped";
    return hostPaths.some((path) => message.includes(path)) ? "untyped" : "typed";
  }
  if (outcome.isError && outcome.text.startsWith("Validation failed for tool")) return "refused";
  return "untyped";
}

export interface FuzzOptions {
  cases: number;
  seed: number;
  /** Tool calls per assistant message. */
  batch?: number;
  /** Cases per Pi session: a fresh session keeps each model request's context small. */
  perSession?: number;
}

/**
 * Sends `cases` mutated inputs to `tool`, `batch` calls per assistant message, in real Pi sessions
 * from `start`. Run IDs seen in results feed later external_runs inputs, so inspect, wait and
 * cancel meet real runs too.
 */
export async function fuzzTool(start: () => Promise<PiTestSession>, tool: string, options: FuzzOptions): Promise<Tally> {
  const { cases, batch = 10, perSession = 500 } = options;
  const random = prng(options.seed);
  const tally: Tally = { tool, cases: 0, ok: 0, typed: 0, refused: 0, untyped: [], unhandledRejections: 0 };
  const onRejection = () => void tally.unhandledRejections++;
  process.on("unhandledRejection", onRejection);
  try {
    for (let sessionStart = 0; sessionStart < cases; sessionStart += perSession) {
      const pi = await start();
      const knownRunIds: string[] = [];
      const hostPaths = [pi.cwd, pi.flowHome, pi.agentDir];
      try {
        const sessionEnd = Math.min(cases, sessionStart + perSession);
        for (let done = sessionStart; done < sessionEnd; done += batch) {
          const inputs = Array.from({ length: Math.min(batch, sessionEnd - done) }, () => mutatedInput(tool, random, knownRunIds));
          const outcomes = await pi.callToolsAtOnce(inputs.map((args) => ({ name: tool, args })));
          outcomes.forEach((outcome, at) => {
            tally.cases++;
            const kind = classify(outcome, hostPaths);
            if (kind === "untyped") tally.untyped.push({ input: inputs[at], text: outcome.text.slice(0, 500) });
            else tally[kind]++;
            for (const id of JSON.stringify(outcome.structuredContent ?? null).match(RUN_ID) ?? []) if (knownRunIds.length < 200) knownRunIds.push(id);
          });
        }
        // The session still answers an ordinary call after all of it.
        const after = await pi.callTool("external_help", { topic: "limits" });
        if (after.isError) tally.untyped.push({ input: { topic: "limits" }, text: `the session stopped working: ${after.text.slice(0, 300)}` });
      } finally {
        await pi.dispose();
      }
    }
  } finally {
    process.off("unhandledRejection", onRejection);
  }
  return tally;
}

export function describeTally(tally: Tally): string {
  return `${tally.tool}: ${tally.cases} cases: ${tally.ok} ok, ${tally.typed} typed errors, ${tally.refused} refused by validation, ${tally.untyped.length} untyped, ${tally.unhandledRejections} unhandled rejections`;
}
