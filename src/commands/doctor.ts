/**
 * `/flow doctor`: what pi-flow runs on and whether it can work, with no model call. Node and Pi
 * versions, the session's model and whether it has credentials, role and agent files that fail to
 * parse, the run store (place, size, writable) and the CLI harnesses found, with their versions.
 */
import { accessSync, constants, existsSync, readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { VERSION, type ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { HarnessState } from "../harnesses/index.ts";
import { telemetryStatus } from "../telemetry/index.ts";
import { needsTrustDecision, TRUST_HINT, UNTRUSTED_LEFT_OUT } from "../trust/project-trust.ts";
import { brokenProfiles } from "./catalog.ts";
import { formatCount, oneLine } from "../ui/index.ts";
import { errorCode } from "../runs/index.ts";

export interface DoctorSources {
  flowHome: string;
  agentDir: string;
  projectTrusted: boolean;
  /** A CLI's `--version` runs without holding Pi (at most 10 s; a hang is remembered for a minute). */
  harnessState(name: string): Promise<HarnessState>;
  /** Which backend runs workflow children: local, or dbos and its database. */
  backend?: string;
  /** The dbos backend's workers seen; undefined on local. */
  workers?: string | undefined;
}

/** Bytes under a folder, stopping at a bound so a huge store cannot stall the command. */
function folderSize(dir: string, budget = { files: 50_000 }): { bytes: number; files: number; partial: boolean } {
  let bytes = 0;
  let files = 0;
  const walk = (path: string): boolean => {
    let entries;
    try {
      entries = readdirSync(path, { withFileTypes: true });
    } catch {
      return true;
    }
    for (const entry of entries) {
      const child = join(path, entry.name);
      if (entry.isDirectory()) {
        if (!walk(child)) return false;
      } else if (entry.isFile()) {
        if (++files > budget.files) return false;
        bytes += statSync(child, { throwIfNoEntry: false })?.size ?? 0;
      }
    }
    return true;
  };
  const complete = walk(dir);
  return { bytes, files, partial: !complete };
}

/** Whether runs can be written there; a store not made yet is judged by its nearest existing parent. */
function writable(dir: string): string {
  let probe = dir;
  while (!existsSync(probe) && dirname(probe) !== probe) probe = dirname(probe);
  try {
    accessSync(probe, constants.W_OK);
    return probe === dir ? "writable" : "not created yet, can be";
  } catch (error) {
    return `NOT writable (${errorCode(error) ?? "error"} at ${probe})`;
  }
}

function bytesText(bytes: number): string {
  return bytes < 1024 ? `${bytes} B` : bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** Whether the model's provider has credentials (a stored login, an environment key, a runtime key), without a request. */
function credentials(ctx: Pick<ExtensionContext, "modelRegistry">, model: NonNullable<ExtensionContext["model"]>): string {
  try {
    const status = ctx.modelRegistry.getProviderAuthStatus(model.provider);
    if (status.configured) return `credentials found${status.source ? ` (${status.source})` : ""}`;
    return `NO credentials${status.label ? ` (${oneLine(status.label)})` : ""}: /login or set the provider's API key`;
  } catch (error) {
    return `NO credentials: ${oneLine(error instanceof Error ? error.message : String(error))}`;
  }
}

export async function doctorLines(ctx: Pick<ExtensionContext, "cwd" | "model" | "modelRegistry">, sources: DoctorSources): Promise<string[]> {
  const lines = [`node     ${process.version}`, `pi       ${VERSION}`];
  const model = ctx.model;
  if (!model) lines.push("model    none selected: children on the pi harness need one (/model)");
  else lines.push(`model    ${model.provider}/${model.id}: ${credentials(ctx, model)}`);
  if (!sources.projectTrusted && needsTrustDecision(ctx.cwd)) {
    lines.push(`project  not trusted: ${UNTRUSTED_LEFT_OUT}; ${TRUST_HINT}`);
  }
  const broken = brokenProfiles(ctx.cwd, sources.flowHome, sources.agentDir, sources.projectTrusted);
  lines.push(broken.length === 0 ? "profiles every role and agent file parses" : `profiles ${broken.length} ${broken.length === 1 ? "file fails" : "files fail"} to parse:`);
  for (const line of broken) lines.push(`  ${line}`);
  const size = folderSize(sources.flowHome);
  lines.push(`runs     ${sources.flowHome}: ${size.partial ? "over " : ""}${bytesText(size.bytes)} in ${formatCount(size.files)} files, ${writable(sources.flowHome)}`);
  if (sources.backend !== undefined) lines.push(`backend  ${sources.backend}`);
  if (sources.workers !== undefined) lines.push(`workers  ${sources.workers}`);
  const names = ["claude", "codex"];
  // Asked together: two CLIs slow to answer `--version` cost one wait, not two.
  const states = await Promise.all(names.map((name) => sources.harnessState(name)));
  for (const [at, name] of names.entries()) {
    const state = states[at]!;
    lines.push(`${name.padEnd(8)} ${state.available ? "ready" : "unavailable"}: ${state.detail}`);
  }
  lines.push(`traces   ${telemetryStatus()}`);
  // The way in for someone with no model, or who does not want to spend tokens yet.
  lines.push("no model? flow run <workflow> --stub answers every child from its output schema; --replay <cassette> from recorded answers (flow help harnesses replay)");
  return lines;
}
