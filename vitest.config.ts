import { readdirSync, readFileSync } from "node:fs";
import { defineConfig } from "vitest/config";

/**
 * Files that must have a process of their own: they count a module's work from its first import,
 * or set process-wide state they never put back. (A file that mocks, spies or stubs through `vi` is
 * found by MOCKS below, so a new one cannot land in a shared worker by mistake.)
 */
const LISTED = [
  "test/cli/check.test.ts",
  "test/e2e/clauses.test.ts",
  "test/e2e/correlation.test.ts",
  "test/harnesses/cli-stop-scans.test.ts",
  "test/harnesses/profile-listing.test.ts",
  "test/harnesses/cli-preflight.test.ts",
  "test/orchestrator/flow-host.test.ts",
  "test/orchestrator/session-settings.test.ts",
  "test/runs/journal-cache.test.ts",
  "test/runs/serialise-once.test.ts",
  "test/runtime/boundary.test.ts",
  "test/runtime/message-batching.test.ts",
  "test/telemetry/bounded-problems.test.ts",
  "test/telemetry/session-spans.test.ts",
  "test/ui/renderers.test.ts",
];

const MOCKS = /\bvi\.(mock|doMock|spyOn|stubGlobal|stubEnv)\(/;
const testFiles = (folder: string): string[] =>
  readdirSync(new URL(`test/${folder}`, import.meta.url), { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".test.ts"))
    .map((name) => `test/${folder}/${name}`);

/**
 * Folders whose files leave nothing behind in the process (they restore what they change): they run
 * one after another in a reused worker, without a new Node, vitest and Pi's imports for each file.
 */
const SHARED_FOLDERS = ["cli", "contract", "e2e", "harnesses", "isolation", "orchestrator", "parent-context", "report", "runs", "runtime", "structure", "telemetry", "trust", "ui"];
const glob = (folder: string) => `test/${folder}/**/*.test.ts`;
/** The shared folders' test files but the isolated ones, listed (a project's own `exclude` would drop `vitest --exclude`). */
const inSharedFolders = SHARED_FOLDERS.flatMap(testFiles);
const ISOLATED = [...LISTED, ...inSharedFolders.filter((file) => !LISTED.includes(file) && MOCKS.test(readFileSync(new URL(file, import.meta.url), "utf8")))];
const SHARED = inSharedFolders.filter((file) => !ISOLATED.includes(file));
/** The other folders (Postgres and fleets, fuzzing) keep a process per file. */
const ISOLATED_FOLDERS = readdirSync(new URL("test", import.meta.url), { withFileTypes: true }).filter((entry) => entry.isDirectory() && !SHARED_FOLDERS.includes(entry.name)).map((entry) => entry.name);

export default defineConfig({
  test: {
    // Real Pi sessions, workers, git and child processes: give them room, never assert on time. A
    // test that takes seconds on a quiet machine took over a minute at load average 14; the limit
    // only says how long a hung test takes to be reported.
    testTimeout: 180_000,
    hookTimeout: 180_000,
    // expect.poll waits for what it polls as long as the test may run: its own default (one second),
    // or a 10 s budget a test named, failed a background completion that came late on a loaded machine.
    expect: { poll: { timeout: 170_000 } },
    pool: "forks",
    // One temporary folder for the whole run, removed at its end (test/support/temp-root.ts).
    globalSetup: ["test/support/temp-root.ts"],
    // Vitest's default is one worker fewer than the CPUs: one, on the 2-CPU machines CI runs on. The
    // tests spend much of their time waiting on child processes (flow, Pi sessions, fake CLIs), so
    // two files at once finish the suite far sooner without starving either.
    maxWorkers: 2,
    projects: [
      // Vitest stops a reused worker whenever the next file in its queue is an isolated one: the
      // isolated files run after the shared ones, so the two shared workers live through the suite.
      { extends: true, test: { name: "shared", include: SHARED, isolate: false, sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: "isolated", include: [...ISOLATED_FOLDERS.map(glob), ...ISOLATED], isolate: true, sequence: { groupOrder: 1 } } },
    ],
  },
});
