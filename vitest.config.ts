import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Real Pi sessions, workers and child processes: give them room, never assert on time.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Vitest's default is one worker fewer than the CPUs: one, on the 2-CPU machines CI runs on. The
    // tests spend much of their time waiting on child processes (flow, Pi sessions, fake CLIs), so
    // two files at once finish the suite far sooner without starving either.
    maxWorkers: 2,
  },
});
