import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Real Pi sessions, workers and child processes: give them room, never assert on time.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
  },
});
