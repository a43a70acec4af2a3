import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { TOOL_NAMES } from "../../src/contract/envelope.ts";
import { startPiSession, type PiTestSession } from "../support/pi-session.ts";

/**
 * Clauses of the contract seeds that pi-flow implements and that no other test pinned. Each test is
 * named after the clause it pins; docs/contract.md's clause index points here.
 */
let pi: PiTestSession;
beforeEach(async () => {
  pi = await startPiSession();
});
afterEach(() => pi.dispose());

describe("tool definitions", () => {
  test("§4.5 (deviation): the four tools run in parallel mode, never sequential", () => {
    for (const name of TOOL_NAMES) {
      const definition = pi.session.getToolDefinition(name);
      expect(definition, name).toBeDefined();
      expect(definition?.executionMode ?? "parallel", name).toBe("parallel");
    }
  });
});
