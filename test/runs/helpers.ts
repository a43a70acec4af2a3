import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Value } from "@sinclair/typebox/value";
import { afterAll, afterEach, beforeAll, beforeEach, expect } from "vitest";
import { FlowError, type ErrorCode } from "../../src/contract/errors.ts";
import { RunViewSchema, type RunView } from "../../src/contract/run-schema.ts";
import { openRunStore, RunRegistry, type RunStore, type WriterHooks } from "../../src/runs/index.ts";

export interface Sandbox {
  root: string;
  home: string;
  project: string;
  registry: RunRegistry;
  store(sessionId?: string, opts?: { cwd?: string; hooks?: WriterHooks }): RunStore;
  /** The same session seen from another process: a registry of its own, only what is on disk shared. */
  otherProcess(sessionId?: string): RunStore;
  cleanup(): void;
}

/** A temp Flow home and project directory, and a fresh registry standing in for one process. */
export function sandbox(): Sandbox {
  const root = mkdtempSync(join(tmpdir(), "pi-flow-runs-"));
  const home = join(root, "home");
  const project = join(root, "project");
  mkdirSync(project);
  const registry = new RunRegistry();
  return {
    root,
    home,
    project,
    registry,
    store: (sessionId = "session-a", opts = {}) =>
      openRunStore({ home, cwd: opts.cwd ?? project, sessionId, registry, ...(opts.hooks ? { hooks: opts.hooks } : {}) }),
    otherProcess: (sessionId = "session-a") => openRunStore({ home, cwd: project, sessionId, registry: new RunRegistry() }),
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

type Hook = (fn: () => void) => void;

/** A sandbox made before and removed after what `before` and `after` bracket. */
function sandboxBetween(before: Hook, after: Hook, use: (box: Sandbox, store: RunStore) => void): void {
  let box: Sandbox | undefined;
  before(() => {
    box = sandbox();
    use(box, box.store());
  });
  after(() => box?.cleanup());
}

/**
 * The runs tests' one set-up: a fresh sandbox and its session's store for every test of the file
 * (or of the describe block it is called in), removed after each.
 */
export const sandboxPerTest = (use: (box: Sandbox, store: RunStore) => void): void => sandboxBetween(beforeEach, afterEach, use);

/** The same, one sandbox shared by every test of the file (or describe block), removed after the last. */
export const sandboxPerFile = (use: (box: Sandbox, store: RunStore) => void): void => sandboxBetween(beforeAll, afterAll, use);

export function expectValidView(view: RunView): void {
  const errors = [...Value.Errors(RunViewSchema, view)].map((e) => `${e.path}: ${e.message}`);
  expect(errors).toEqual([]);
}

/** Run `fn` and return the FlowError code it throws (fails the test if it does not throw one). */
export function codeOf(fn: () => unknown): ErrorCode {
  try {
    fn();
  } catch (error) {
    if (error instanceof FlowError) return error.code;
    throw error;
  }
  throw new Error("expected a FlowError, nothing was thrown");
}

export function messageOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof Error) return error.message;
  }
  throw new Error("expected an error");
}
