import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CHILD_LOG_LIMITS, withBoundedLogs } from "../log-bounds.ts";
import type { ChildProfile } from "../profiles.ts";
import { quotaBreach } from "../quotas.ts";
import { PI_DEFAULT_TOOLS, writes } from "../child-tools.ts";
import { checkStructuredValue, parseStructuredAnswer } from "../structured-answer.ts";
import type { ChildRequest, ChildResult, ChildUsage, Harness } from "../types.ts";
import { childEnvironment, withUntrustedGitConfig } from "./env.ts";
import { isRecord, keepCountsWhole, redactedStart } from "./guards.ts";
import { describePreflight, preflightCli } from "./preflight.ts";
import { claimSession } from "./resume-claims.ts";
import { startCliProcess, type CliExit, type CliProcess } from "./process.ts";
import { CliLaunchError, StreamFormatError, type CliAdapter, type CliLaunch, type StreamAnswer, type StreamSink } from "./types.ts";
import { stoppedByTimeout, stoppedResult } from "../outcomes.ts";
import { zeroUsage } from "../usage.ts";
import { stripControls } from "../../runs/index.ts";

/**
 * Runs one child on an external CLI (the adapter says which and how) and turns its stream into the
 * run's progress, output, diagnostics and result. Whatever the CLI does (a malformed line, a cut
 * stream, a crash, a flood of output) fails that child with a message; it never throws into the
 * host. A cancel or a timeout ends the CLI's whole process group.
 */

export interface CliHarnessOptions {
  /** The CLI's own model name; undefined lets the CLI choose. */
  model?: string;
  /** Continue this CLI session instead of starting a new one. */
  resumeSessionId?: string;
  /** Between SIGTERM and SIGKILL when a child is stopped. */
  killGraceMs?: number;
  /** The longest stdout line (one event) accepted; a longer one fails the child. */
  maxLineBytes?: number;
  /** stderr kept for diagnostics (start and end). */
  maxStderrBytes?: number;
  /** Assistant text written to the run's output log; the answer itself is never cut. */
  maxOutputBytes?: number;
  /** Tool calls, tool results and errors read from the stream, written to the run's diagnostics log. */
  maxDiagnosticsBytes?: number;
  /** The environment the allowlist reads from; default process.env. */
  env?: NodeJS.ProcessEnv;
}

/** PI_FLOW_CLI_KILL_GRACE_MS: how long a stopped CLI gets between SIGTERM and SIGKILL (default 3 s, at most 60 s). */
export const KILL_GRACE_VARIABLE = "PI_FLOW_CLI_KILL_GRACE_MS";

function configuredGrace(env: NodeJS.ProcessEnv): number | undefined {
  const raw = env[KILL_GRACE_VARIABLE];
  const value = raw === undefined ? Number.NaN : Number(raw);
  return Number.isInteger(value) && value >= 0 && value <= 60_000 ? value : undefined;
}

export const CLI_DEFAULTS = {
  killGraceMs: 3000,
  maxLineBytes: 32 * 1024 * 1024,
  maxStderrBytes: 64 * 1024,
  ...CHILD_LOG_LIMITS,
};

/** A child whose tools neither write, edit nor run commands runs in the CLI's read-only mode. No tools list means Pi's defaults, which write. */
export function isReadOnlyProfile(profile: ChildProfile): boolean {
  return !writes(profile.tools ?? PI_DEFAULT_TOOLS);
}

const failed = (message: string, usage: ChildUsage): ChildResult => ({ outcome: "failed", error: { code: "failed", message }, usage });

/** The outcome of an answered stream, with the outputSchema applied when there is one. */
async function answered(answer: Extract<StreamAnswer, { ok: true }>, request: ChildRequest, usage: ChildUsage): Promise<ChildResult> {
  if (!request.outputSchema) {
    const value = answer.text.trim();
    return value.length > 0 ? { outcome: "succeeded", value, usage } : failed("The child finished without an answer.", usage);
  }
  const checked = answer.structured
    ? await checkStructuredValue(answer.structured.value, request.outputSchema, request.signal)
    : await parseStructuredAnswer(answer.text, request.outputSchema, request.signal);
  if (!checked.ok && request.signal.aborted) return stoppedResult(request, usage);
  return checked.ok ? { outcome: "succeeded", value: checked.value, usage } : failed(checked.message, usage);
}

/** A line of the stream as a message quotes it: redacted, then cut to 200 characters (a 32 MiB line is not redacted whole). */
const quoted = (line: string): string => JSON.stringify(redactedStart(line, 200));

/** What the process's end says beyond the stream: a non-zero exit code and the end of stderr. */
function exitNote(exit: CliExit): string {
  if (exit.code === 0) return "";
  const tail = stripControls(exit.stderr.lastLines(600));
  return tail ? ` (stderr: ${tail})` : "";
}

async function runCli(adapter: CliAdapter, request: ChildRequest, options: CliHarnessOptions): Promise<ChildResult> {
  const { spec } = adapter;
  const env = options.env ?? process.env;
  const limits = { ...CLI_DEFAULTS, killGraceMs: configuredGrace(env) ?? CLI_DEFAULTS.killGraceMs, ...options };
  const usage: ChildUsage = zeroUsage();
  if (request.signal.aborted) return stoppedResult(request, usage);
  // The preflight passed before launch; this catches a binary removed in between.
  const preflight = await preflightCli(spec, env, { signal: request.signal });
  if (request.signal.aborted) return stoppedResult(request, usage);
  if (!preflight.ok) return failed(`The ${spec.name} harness is ${describePreflight(spec, preflight)}`, usage);

  const { resumeSessionId } = options;
  const claim = resumeSessionId !== undefined && !spec.forksOnResume ? claimSession(spec.name, resumeSessionId) : { release: () => undefined };
  if ("refused" in claim) {
    return failed(`${claim.refused}: ${spec.product} cannot fork it, so two resumes at once would write one thread. Wait for that run to end, then resume.`, usage);
  }
  const { release } = claim;
  let scratchDir: string | undefined;
  try {
    // Inside the try: a scratch folder that cannot be made (a full disk) still releases the claim.
    scratchDir = mkdtempSync(join(tmpdir(), `pi-flow-${spec.name}-`));
    const childEnv = request.loading.projectTrusted ? childEnvironment(spec.name, spec.ownEnv, env) : withUntrustedGitConfig(childEnvironment(spec.name, spec.ownEnv, env));
    let launch: CliLaunch;
    try {
      launch = await adapter.launch({
        request,
        model: options.model,
        readOnly: isReadOnlyProfile(request.profile),
        scratchDir,
        resumeSessionId: options.resumeSessionId,
        binary: preflight.binary,
        version: preflight.version,
        env: childEnv,
      });
    } catch (error) {
      if (request.signal.aborted) return stoppedResult(request, usage);
      if (error instanceof CliLaunchError) return failed(error.message, usage);
      throw error;
    }
    if (request.signal.aborted) return stoppedResult(request, usage);
    if (launch.narrowed) request.onDiagnostic({ type: "narrowed", ...launch.narrowed });
    let failure: string | undefined;
    let sessionReported = false;
    const bounded = withBoundedLogs(request, limits, spec.name);
    const sink: StreamSink = {
      usage,
      progress: (activity) => request.onProgress({ usage: { ...usage }, activity }),
      output: bounded.onOutput,
      diagnostic: bounded.onDiagnostic,
      // One run is one CLI session: the first id is the one to resume, and a stream that names
      // session after session must not write entry after entry past the diagnostics bound.
      session: (sessionId) => {
        if (sessionReported) return;
        sessionReported = true;
        request.onDiagnostic({ type: "session", harness: spec.name, sessionId });
      },
    };
    const reader = adapter.reader(sink);
    let child: CliProcess | undefined;
    /**
     * Set once the CLI outlived its final event by the grace period and was ended for it (Claude
     * Code is known to keep running, stdout open or not, after its result): the run has its answer.
     */
    let lingered = false;
    let lingerTimer: NodeJS.Timeout | undefined;
    let exited = false;
    const fail = (message: string) => {
      failure ??= message;
      child?.stop(message);
    };
    let strayNoted = false;
    /**
     * A line after the final event (a late warning on stdout, a cut line, a later event) takes
     * nothing from the run: the final event is authoritative, so nothing after it is read, counted
     * against a quota or failed on. The first is noted.
     */
    const stray = (line: string): "read" => {
      if (!strayNoted) {
        strayNoted = true;
        sink.diagnostic({ type: "error", message: `${spec.name} wrote a line after its final event, ignored (and any more): ${quoted(line)}` });
      }
      return "read";
    };
    /** Reads one line: "cut" when it is not JSON (a line the stream ended inside is not), "failed" when it failed the child. */
    const read = (line: string): "read" | "cut" | "failed" => {
      if (reader.ended()) return stray(line);
      let event: unknown;
      try {
        event = JSON.parse(line);
      } catch {
        fail(`${spec.name} wrote a line that is not JSON: ${quoted(line)}`);
        return "cut";
      }
      try {
        if (!isRecord(event)) throw new StreamFormatError("a line is JSON but not an object");
        reader.onEvent(event);
      } catch (error) {
        const why = error instanceof StreamFormatError ? error.message : `its event could not be read (${String(error)})`;
        fail(`${spec.name}'s output stream is malformed: ${why}`);
        return "failed";
      } finally {
        // Also when the event failed half read: the failed run's usage is whole numbers too.
        keepCountsWhole(usage);
      }
      // Quotas fail closed: the first event past one ends the CLI's process group.
      const breach = quotaBreach(request.quotas, usage);
      if (breach !== undefined) {
        request.onDiagnostic({ type: "error", message: breach });
        fail(breach);
        return "failed";
      }
      // A last line read after the exit (no newline) has no process left to wait for.
      if (lingerTimer === undefined && !exited && reader.ended()) {
        lingerTimer = setTimeout(() => {
          if (failure !== undefined) return;
          lingered = true;
          request.onDiagnostic({ type: "error", message: `${spec.name} kept running after its final event; it was ended.` });
          child?.stop("it kept running after its final event");
        }, limits.killGraceMs);
      }
      return "read";
    };

    child = startCliProcess({
      command: preflight.binary,
      args: launch.args,
      cwd: request.cwd,
      env: childEnv,
      stdin: launch.stdin,
      killGraceMs: limits.killGraceMs,
      maxLineBytes: limits.maxLineBytes,
      maxStderrBytes: limits.maxStderrBytes,
      onLine: (line) => {
        if (failure === undefined) read(line);
      },
    });
    const stop = () => child?.stop(stoppedByTimeout(request.signal) ? "its time ran out" : "it was cancelled");
    request.signal.addEventListener("abort", stop, { once: true });
    if (request.signal.aborted) stop();
    const exit = await child.exited;
    exited = true;
    clearTimeout(lingerTimer);
    request.signal.removeEventListener("abort", stop);

    // stderr is the CLI's terminal text: its escape sequences go before it reaches a receipt or a screen.
    if (!exit.stderr.empty) request.onDiagnostic({ type: "stderr", text: stripControls(exit.stderr.text()) });
    if (request.signal.aborted) return stoppedResult(request, usage);
    const settle = (): ChildResult | Promise<ChildResult> => {
      if (exit.spawnError !== undefined && exit.code === null && exit.signal === null) {
        return failed(`${spec.product} could not be started: ${exit.spawnError}`, usage);
      }
      if (failure !== undefined) return failed(failure, usage);
      if (exit.stopped !== undefined && !lingered) return failed(`${spec.product} was stopped: ${exit.stopped}.`, usage);
      // A last line with no newline is fine if it is whole; a cut one means the stream was truncated.
      const last = exit.unterminated === undefined ? "read" : read(exit.unterminated);
      if (last === "cut") return failed(`${spec.name}'s output stream ended in the middle of an event${exitNote(exit)}`, usage);
      // A whole last line can still fail the child: a malformed event, or one past a quota.
      if (last === "failed") return failed(failure ?? `${spec.name}'s output stream is malformed`, usage);
      let answer: StreamAnswer;
      try {
        answer = reader.finish(exit.code, exit.signal);
      } catch (error) {
        return failed(`${spec.name}'s output stream is malformed: ${error instanceof Error ? error.message : String(error)}`, usage);
      }
      return answer.ok ? answered(answer, request, usage) : failed(`${answer.message}${exitNote(exit)}`, usage);
    };
    return await settle();
  } finally {
    release();
    if (scratchDir !== undefined) rmSync(scratchDir, { recursive: true, force: true });
  }
}

export function createCliHarness(adapter: CliAdapter, options: CliHarnessOptions = {}): Harness {
  return { name: adapter.spec.name, run: (request) => runCli(adapter, request, options) };
}
