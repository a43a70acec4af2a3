// The seeded fuzz suite: mutated inputs for each tool through real Pi sessions, hostile scripts
// among them (hostile.test.ts runs the slow ones once each). Nothing may crash the host, reject
// unhandled, or come back untyped. `npm run fuzz` is the long mode: FUZZ_CASES per tool.
import { expect, test } from "vitest";
import { startPiSession } from "../support/pi-session.ts";
import { describeTally, fuzzTool, FUZZ_TOOLS } from "./drive.ts";

const CASES = Number(process.env.FUZZ_CASES ?? 500);
const SEED = Number(process.env.FUZZ_SEED ?? 20261130);

test.each(FUZZ_TOOLS)(`%s: ${CASES} mutated inputs, each a typed outcome`, { timeout: 0 }, async (tool) => {
  const tally = await fuzzTool(() => startPiSession(), tool, { cases: CASES, seed: SEED + FUZZ_TOOLS.indexOf(tool) });
  console.log(describeTally(tally));
  expect(tally.cases).toBe(CASES);
  expect(tally.untyped).toEqual([]);
  expect(tally.unhandledRejections).toBe(0);
  // The mix must reach execute, not only Pi's validation.
  expect(tally.ok + tally.typed).toBeGreaterThan(CASES / 10);
});
