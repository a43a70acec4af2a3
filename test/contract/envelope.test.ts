import { describe, expect, test } from "vitest";
import { fail, succeed, toToolResult, TOOL_NAMES } from "../../src/contract/envelope.ts";
import { ERROR_CODE_LIST, ERROR_CODES, FlowError, isErrorCode } from "../../src/contract/errors.ts";
import { TOOL_SCHEMAS } from "../../src/contract/metadata.ts";
import { schemaViolation } from "../support/schema.ts";

describe("envelope", () => {
  test("a success carries the v1 fields, no error, and an ISO observedAt", () => {
    const envelope = succeed("external_help", "help", { topic: "roles", text: "x" });
    expect(Object.keys(envelope).sort()).toEqual(["action", "contractVersion", "data", "observedAt", "ok", "tool", "warnings"]);
    expect(envelope).toMatchObject({ contractVersion: 1, tool: "external_help", action: "help", ok: true, warnings: [] });
    expect(new Date(envelope.observedAt).toISOString()).toBe(envelope.observedAt);
    expect("error" in envelope).toBe(false);
  });

  test("a failure carries error {code, message} and its failure data", () => {
    const envelope = fail("external_delegate", "delegate", "selection_invalid", "Unknown role", { run: null }, ["w"]);
    expect(envelope.ok).toBe(false);
    expect(envelope.error).toEqual({ code: "selection_invalid", message: "Unknown role" });
    expect(envelope.data).toEqual({ run: null });
    expect(envelope.warnings).toEqual(["w"]);
  });

  test("the tool result's isError is exactly !ok, and content, details and structuredContent stay apart", () => {
    const ok = toToolResult(succeed("external_help", "help", { topic: "roles", text: "t" }), "model text", { topic: "roles" });
    const bad = toToolResult(fail("external_help", "help", "selection_invalid", "m", null), "error text", { topic: "x" });
    expect(ok.isError).toBe(false);
    expect(bad.isError).toBe(true);
    expect(ok.content).toEqual([{ type: "text", text: "model text" }]);
    expect(ok.details).toEqual({ topic: "roles" });
    expect(ok.structuredContent).toMatchObject({ ok: true, data: { text: "t" } });
    expect(bad.structuredContent).toMatchObject({ ok: false, error: { code: "selection_invalid" } });
  });

  test("each tool's output schema accepts its own success and failure envelopes and rejects a mixed one", () => {
    const help = TOOL_SCHEMAS.external_help.output;
    expect(schemaViolation(help, succeed("external_help", "help", { topic: "roles", text: "t" }))).toBeNull();
    expect(schemaViolation(help, fail("external_help", "help", "selection_invalid", "m", null))).toBeNull();
    const okWithError = { ...succeed("external_help", "help", { topic: "roles", text: "t" }), ok: false };
    expect(schemaViolation(help, okWithError)).not.toBeNull();
    const foreignCode = { ...fail("external_help", "help", "selection_invalid", "m", null), error: { code: "oops", message: "m" } };
    expect(schemaViolation(help, foreignCode)).not.toBeNull();
    const delegate = TOOL_SCHEMAS.external_delegate.output;
    expect(schemaViolation(delegate, fail("external_delegate", "delegate", "session_closed", "closed", { run: null }))).toBeNull();
    const workflow = TOOL_SCHEMAS.external_workflow.output;
    expect(schemaViolation(workflow, fail("external_workflow", "run", "script_invalid", "line 1", { run: null }))).toBeNull();
    const runs = TOOL_SCHEMAS.external_runs.output;
    expect(schemaViolation(runs, succeed("external_runs", "cancel", { runId: "r", status: "requested" }))).toBeNull();
    expect(schemaViolation(runs, fail("external_runs", "wait", "run_unavailable", "m", null))).toBeNull();
  });
});

describe("error codes", () => {
  test("are the contract's closed set, each with its meaning", () => {
    expect([...ERROR_CODE_LIST].sort()).toEqual(
      [
        "configuration_invalid",
        "harness_unavailable",
        "selection_invalid",
        "model_unavailable",
        "context_invalid",
        "session_closed",
        "failed",
        "cancelled",
        "timed_out",
        "request_invalid",
        "run_unavailable",
        "run_not_live",
        "cursor_invalid",
        "cursor_stale",
        "page_too_small",
        "session_unavailable",
        "script_invalid",
        "storage_unavailable",
      ].sort(),
    );
    for (const code of ERROR_CODE_LIST) expect(ERROR_CODES[code].length).toBeGreaterThan(10);
    expect(isErrorCode("run_unavailable")).toBe(true);
    expect(isErrorCode("toString")).toBe(false);
    expect(new FlowError("cursor_stale", "restart").code).toBe("cursor_stale");
  });

  test("every tool has an input and an output schema", () => {
    for (const name of TOOL_NAMES) {
      expect(TOOL_SCHEMAS[name].input).toBeTypeOf("object");
      expect(TOOL_SCHEMAS[name].output).toBeTypeOf("object");
    }
  });
});

describe("cancellation at entry", () => {
  test("an already-aborted signal fails at once with its reason, or an AbortError", async () => {
    const { abortIfSignalled } = await import("../../src/tools/abort.ts");
    expect(() => abortIfSignalled(undefined)).not.toThrow();
    expect(() => abortIfSignalled(new AbortController().signal)).not.toThrow();
    const withReason = new AbortController();
    withReason.abort(new Error("user pressed Esc"));
    expect(() => abortIfSignalled(withReason.signal)).toThrow("user pressed Esc");
    const bare = new AbortController();
    bare.abort("no error object");
    expect(() => abortIfSignalled(bare.signal)).toThrow(expect.objectContaining({ name: "AbortError" }));
  });
});
