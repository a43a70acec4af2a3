import { expect } from "vitest";
import type { RunView } from "../../src/contract/run-schema.ts";
import { TOOL_SCHEMAS } from "../../src/contract/metadata.ts";
import type { PiTestSession, TurnScript } from "./pi-session.ts";
import { schemaViolation } from "./schema.ts";

/** The envelope of external_delegate and external_workflow. */
export type Receipt = { ok: boolean; data: { run: RunView | null }; warnings: string[]; error?: { code: string; message: string } };

/**
 * Calls a run-launching tool as the model would and checks the envelope invariants every receipt
 * must keep: it matches the tool's output schema, and the row is red exactly when ok is false.
 */
export async function callForReceipt(
  pi: PiTestSession,
  tool: "external_delegate" | "external_workflow",
  args: Record<string, unknown>,
  script: TurnScript = {},
) {
  const result = await pi.callTool(tool, args, script);
  const receipt = result.structuredContent as Receipt;
  expect(schemaViolation(TOOL_SCHEMAS[tool].output, receipt)).toBeNull();
  expect(result.isError).toBe(!receipt.ok);
  return { result, receipt, run: receipt.data.run };
}
