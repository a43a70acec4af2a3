/**
 * `flow`'s main, called inside the test's own process: the same command, flags, Flow home and
 * Pi agent directory as `flow(args, { env })` in support.ts, without starting a new Node and
 * loading Pi's imports again for each case (about a second each). For tests about what a command
 * does; what only a real process shows (exit codes as a shell sees them, signals, pipes, a
 * terminal) stays with `flow()`. Calls take turns: each one has the process's environment, working
 * directory and standard streams to itself while it runs.
 */
import { PROJECT_ROOT, type FlowResult } from "./support.ts";

type Write = typeof process.stdout.write;

let queue: Promise<unknown> = Promise.resolve();

/** A stream's writes, kept as text instead of printed, until `restore`. */
function capture(stream: NodeJS.WriteStream): { text(): string; restore(): void } {
  const original = stream.write;
  let text = "";
  stream.write = ((chunk: string | Uint8Array, encoding?: BufferEncoding | ((error?: Error | null) => void), callback?: (error?: Error | null) => void): boolean => {
    text += typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
    const done = typeof encoding === "function" ? encoding : callback;
    if (done) queueMicrotask(() => done());
    return true;
  }) as Write;
  return { text: () => text, restore: () => void (stream.write = original) };
}

async function runMain(args: readonly string[], options: { cwd?: string; env: NodeJS.ProcessEnv }): Promise<FlowResult> {
  const { main } = await import("../../src/command-line/main.ts");
  const savedEnv = { ...process.env };
  const savedCwd = process.cwd();
  for (const key of Object.keys(process.env)) delete process.env[key];
  Object.assign(process.env, options.env);
  process.chdir(options.cwd ?? PROJECT_ROOT);
  const stdout = capture(process.stdout);
  const stderr = capture(process.stderr);
  // main's handlers for a closed pipe and SIGXFSZ are a process's, installed once per process: drop them after.
  const listeners: { emitter: NodeJS.EventEmitter; event: string; before: readonly unknown[] }[] = [
    { emitter: process.stdout, event: "error", before: process.stdout.listeners("error") },
    { emitter: process.stderr, event: "error", before: process.stderr.listeners("error") },
    { emitter: process, event: "SIGXFSZ", before: process.listeners("SIGXFSZ") },
  ];
  try {
    const code = await main(args);
    return { code, signal: null, stdout: stdout.text(), stderr: stderr.text() };
  } finally {
    for (const { emitter, event, before } of listeners) {
      for (const listener of emitter.listeners(event)) if (!before.includes(listener)) emitter.off(event, listener as (...args: unknown[]) => void);
    }
    stdout.restore();
    stderr.restore();
    process.chdir(savedCwd);
    for (const key of Object.keys(process.env)) delete process.env[key];
    Object.assign(process.env, savedEnv);
  }
}

/** Runs `flow <args>` in this process; resolves as `flow()` does, with the code main returned. */
export function flowInProcess(args: readonly string[], options: { cwd?: string; env: NodeJS.ProcessEnv }): Promise<FlowResult> {
  const result = queue.then(() => runMain(args, options));
  queue = result.catch(() => undefined);
  return result;
}
