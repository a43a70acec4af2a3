import { defineConfig } from "vitest/config";

// `npm run test:fleet`: the dbos backend's slow cases (a worker killed mid-child waits out the
// heartbeat silence before another takes over). Not part of `npm test`.
export default defineConfig({
  test: {
    include: ["test/fleet/**/*.fleet.ts"],
    testTimeout: 600_000,
    hookTimeout: 120_000,
    pool: "forks",
    globalSetup: ["test/support/temp-root.ts"],
    maxWorkers: 1,
  },
});
