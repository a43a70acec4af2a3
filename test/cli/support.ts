/**
 * Runs the real `flow` executable (bin/flow.js) as a child process, the way a user's shell does,
 * with a Flow home, a Pi agent directory and a HOME of its own, so nothing touches the real ones.
 * Tests that need children on a model pass `--extension` FAUX_EXTENSION: Pi's faux provider, the
 * only stand-in, registered inside the flow process and scripted by a rules file.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PROJECT_ROOT } from "../support/pi-session.ts";

export { PROJECT_ROOT };
export const FLOW_BIN = join(PROJECT_ROOT, "bin", "flow.js");
export const FAUX_EXTENSION = join(PROJECT_ROOT, "test", "cli", "fixtures", "faux-model.ts");
export const ECHO_EXTENSION = join(PROJECT_ROOT, "test", "cli", "fixtures", "echo-tool.ts");
export const QUICKSTART = join(PROJECT_ROOT, "examples", "quickstart");
export const CASSETTES = join(PROJECT_ROOT, "examples", "cassettes");
/** The target the shipped review cassette was recorded for (the README's "Try it" command). */
export const REVIEW_TARGET = "src/slugify.js and its test, test/slugify.test.js";

export interface FlowResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** The faux model's price per million tokens, in Pi's catalog shape. */
export interface FauxCost {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

export interface FauxRule {
  match: string;
  answer?: string;
  tool?: { name: string; arguments: Record<string, unknown> };
  then?: string;
  /** The request fails as a provider's does, with this message. */
  error?: string;
  /** The answer waits until this file exists: a test holds a child mid-request for as long as it needs. */
  waitFor?: string;
  /** The answer after the tool's result waits until this file exists; the tool call goes at once. */
  thenWaitFor?: string;
  /** The tool is called only while the conversation holds no tool result (a steer after it is answered). */
  once?: boolean;
}

export interface FlowSandbox {
  root: string;
  agentDir: string;
  flowHome: string;
  env: NodeJS.ProcessEnv;
  /** Writes the faux model's rules and points FLOW_FAUX_SCRIPT at them. */
  fauxRules(rules: FauxRule[], options?: { cost?: FauxCost }): void;
  /** A file in the sandbox, written now; returns its path. */
  file(name: string, text: string): string;
  dispose(): void;
}

export function flowSandbox(): FlowSandbox {
  const root = mkdtempSync(join(tmpdir(), "pi-flow-cli-"));
  const agentDir = join(root, "agent");
  const flowHome = join(root, "flow-home");
  mkdirSync(agentDir, { recursive: true });
  const env: NodeJS.ProcessEnv = {};
  // npm_lifecycle_event says how flow was started (npx or an npm script); a test starts it as a user's shell would.
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith("PI_") && key !== "npm_lifecycle_event") env[key] = value;
  Object.assign(env, { HOME: root, PI_CODING_AGENT_DIR: agentDir, PI_FLOW_HOME: flowHome });
  return {
    root,
    agentDir,
    flowHome,
    env,
    fauxRules(rules, options = {}) {
      env.FLOW_FAUX_SCRIPT = this.file("faux-rules.json", JSON.stringify({ rules, ...options }));
    },
    file(name, text) {
      const path = join(root, name);
      writeFileSync(path, text);
      return path;
    },
    dispose: () => rmSync(root, { recursive: true, force: true }),
  };
}

export interface RunningFlow {
  child: ChildProcess;
  /** Resolves with the first stderr line matching `pattern`, as soon as it is written. */
  stderrLine(pattern: RegExp): Promise<string>;
  stdoutText(pattern: RegExp): Promise<string>;
  done: Promise<FlowResult>;
}

export function startFlow(args: readonly string[], options: { cwd?: string; env: NodeJS.ProcessEnv }): RunningFlow {
  const child = spawn(process.execPath, [FLOW_BIN, ...args], { cwd: options.cwd ?? PROJECT_ROOT, env: options.env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  const waiters: { stream: "stdout" | "stderr"; pattern: RegExp; resolve(text: string): void }[] = [];
  const check = () => {
    for (const waiter of [...waiters]) {
      const text = waiter.stream === "stdout" ? stdout : stderr;
      const found = waiter.stream === "stderr" ? text.split("\n").find((line) => waiter.pattern.test(line)) : waiter.pattern.test(text) ? text : undefined;
      if (found !== undefined) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(found);
      }
    }
  };
  child.stdout!.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8");
    check();
  });
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
    check();
  });
  const done = new Promise<FlowResult>((resolve) => {
    child.on("close", (code, signal) => {
      for (const waiter of waiters) waiter.resolve(`(flow exited before printing ${waiter.pattern}; stderr:\n${stderr})`);
      resolve({ code, signal, stdout, stderr });
    });
  });
  const waitFor = (stream: "stdout" | "stderr") => (pattern: RegExp) =>
    new Promise<string>((resolve) => {
      waiters.push({ stream, pattern, resolve });
      check();
    });
  return { child, stderrLine: waitFor("stderr"), stdoutText: waitFor("stdout"), done };
}

export function flow(args: readonly string[], options: { cwd?: string; env: NodeJS.ProcessEnv }): Promise<FlowResult> {
  return startFlow(args, options).done;
}

/** The run IDs' places in a value, so two runs' values compare equal when only their IDs differ. */
export function withoutRunIds(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value).replace(/\b(?:ag|wf)_[0-9a-z]{9}_[0-9a-z]{10}\b/g, "<run>"));
}

/** The text of one of a run's files (`journal.jsonl`, `record.json`…), found in the sandbox's Flow home. */
export function runFileText(sandbox: FlowSandbox, runId: string, name: string): string {
  const projects = join(sandbox.flowHome, "projects");
  for (const project of readdirSync(projects)) {
    const sessions = join(projects, project, "sessions");
    for (const session of readdirSync(sessions)) {
      try {
        return readFileSync(join(sessions, session, "runs", runId, name), "utf8");
      } catch {
        // Not in this session.
      }
    }
  }
  throw new Error(`no ${name} for ${runId} under ${projects}`);
}

/** The journal lines of one run, found in the sandbox's Flow home. */
export function journalOf(sandbox: FlowSandbox, runId: string): Record<string, unknown>[] {
  const text = runFileText(sandbox, runId, "journal.jsonl");
  return text.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** The workflow run ID the progress lines announce. */
export const startedRunId = (stderr: string): string => /run (wf_[0-9a-z_]+) started/.exec(stderr)?.[1] ?? "(no run started)";

/** One argument quoted for a POSIX shell. */
export const shellQuote = (arg: string): string => `'${arg.replace(/'/g, "'\\''")}'`;

/** The command that starts the real flow with `args` from a shell: this Node (with `nodeFlags`), bin/flow.js. */
export const flowCommandLine = (args: readonly string[], nodeFlags: readonly string[] = []): string => [process.execPath, ...nodeFlags, FLOW_BIN, ...args].map(shellQuote).join(" ");

/**
 * Runs `command` as a user's shell does (`sh -c`, or `bash -c`), in `cwd` (the checkout's root
 * by default) with `env`, and collects what it printed and how it ended.
 */
export function shell(command: string, options: { env: NodeJS.ProcessEnv; cwd?: string; bash?: boolean }): Promise<FlowResult> {
  const child = spawn(options.bash ? "bash" : "sh", ["-c", command], { cwd: options.cwd ?? PROJECT_ROOT, env: options.env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  return new Promise((resolve) => child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr })));
}

/** The sandbox's environment as a user's shell has it for npm and npx: no npm_* variables of the npm that started the tests, the checkout's node_modules off the PATH. */
export function userShellEnv(sandbox: FlowSandbox): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(sandbox.env)) if (!key.toLowerCase().startsWith("npm_")) env[key] = value;
  env.PATH = (sandbox.env.PATH ?? "").split(":").filter((dir) => !dir.includes("node_modules")).join(":");
  return env;
}
