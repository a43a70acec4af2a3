import { defineConfig } from "vitest/config";

// `npm run test:large`: cases that need hundreds of megabytes of disk (a child's huge binary file).
// Not part of `npm test`.
export default defineConfig({
  test: {
    include: ["test/**/*.large.ts"],
    testTimeout: 600_000,
    hookTimeout: 120_000,
    pool: "forks",
    globalSetup: ["test/support/temp-root.ts"],
    maxWorkers: 1,
  },
});
