import { FlowError } from "../../contract/errors.ts";
import type { Harness, HarnessState } from "../types.ts";
import { claudeAdapter } from "./claude.ts";
import { codexAdapter } from "./codex.ts";
import { describePreflight, preflightCli } from "./preflight.ts";
import { createCliHarness, type CliHarnessOptions } from "./cli-harness.ts";
import type { CliAdapter } from "./types.ts";

/** The external CLI harnesses, by the name `harness` selects them with. */
const CLI_ADAPTERS: Record<string, CliAdapter> = { claude: claudeAdapter, codex: codexAdapter };

/** The provider prefix a `provider/id` model may carry for each CLI; the CLI takes the id alone. */
const MODEL_PREFIX: Record<string, string> = { claude: "anthropic/", codex: "openai/" };

export const isCliHarness = (name: string): boolean => Object.hasOwn(CLI_ADAPTERS, name);

/** Whether a resume of this CLI continues the earlier session itself (no fork): two at once would write one thread. */
export const resumesInPlace = (name: string): boolean => isCliHarness(name) && !CLI_ADAPTERS[name]!.spec.forksOnResume;

function adapterOf(name: string): CliAdapter {
  const adapter = CLI_ADAPTERS[name];
  if (!adapter) throw new Error(`no CLI harness named ${name}`);
  return adapter;
}

/**
 * The preflight before launch: a missing or unfit CLI is harness_unavailable, with the fix. It
 * does not hold Pi while `--version` runs; `signal` aborting ends that and rejects with its reason.
 */
export async function assertCliAvailable(name: string, signal?: AbortSignal): Promise<void> {
  const adapter = adapterOf(name);
  const preflight = await preflightCli(adapter.spec, process.env, signal ? { signal } : {});
  signal?.throwIfAborted();
  if (!preflight.ok) {
    throw new FlowError("harness_unavailable", `The ${name} harness is ${describePreflight(adapter.spec, preflight)}`);
  }
}

/**
 * The harness's state now, for external_help and `/flow doctor`: available with binary and version,
 * or why not. Pi goes on while `--version` runs; `signal` aborting ends it (the state then says it was cancelled).
 */
export async function cliHarnessState(name: string, signal?: AbortSignal): Promise<HarnessState> {
  const adapter = adapterOf(name);
  const preflight = await preflightCli(adapter.spec, process.env, signal ? { signal } : {});
  const detail = describePreflight(adapter.spec, preflight);
  if (preflight.ok) return { name, available: true, detail, binary: preflight.binary, version: preflight.version };
  return { name, available: false, detail, ...(preflight.binary !== undefined ? { binary: preflight.binary } : {}) };
}

/**
 * A CLI takes its own model names (`sonnet`, `gpt-5-codex`, …), not the registry's: the name is
 * passed through, without an `anthropic/` (claude) or `openai/` (codex) prefix. Anything that
 * could be read as a flag, or holds spaces or control characters, is model_unavailable.
 */
export function resolveCliModel(name: string, requested: string | undefined): string | undefined {
  if (requested === undefined) return undefined;
  const prefix = MODEL_PREFIX[name] ?? "";
  const model = requested.startsWith(prefix) ? requested.slice(prefix.length) : requested;
  if (!/^[A-Za-z0-9][A-Za-z0-9._:/@[\]-]*$/.test(model)) {
    throw new FlowError("model_unavailable", `Model "${requested}" is not a model name the ${name} CLI can take.`);
  }
  return model;
}

/**
 * A CLI harness. With `resumeSessionId` it continues that CLI session (`claude --resume=<id>`,
 * `codex exec … resume <id>`); an id that could be read as a flag is request_invalid.
 */
export function createCliHarnessByName(name: string, options: CliHarnessOptions = {}): Harness {
  const { resumeSessionId } = options;
  if (resumeSessionId !== undefined && !/^[A-Za-z0-9][A-Za-z0-9._:-]*$/.test(resumeSessionId)) {
    throw new FlowError("request_invalid", `"${resumeSessionId}" is not a ${name} session id.`);
  }
  return createCliHarness(adapterOf(name), options);
}

export { claudeAdapter, codexAdapter };
export type { CliHarnessOptions };
