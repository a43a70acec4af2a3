import type { JsonValue, Usage } from "@earendil-works/pi-ai";
import { Type, type TSchema } from "@sinclair/typebox";
import { ERROR_CODE_LIST, type ErrorCode } from "./errors.ts";

export const CONTRACT_VERSION = 1;

export const TOOL_NAMES = ["external_delegate", "external_workflow", "external_runs", "external_help"] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

export interface SuccessEnvelope<TData> {
  contractVersion: typeof CONTRACT_VERSION;
  tool: ToolName;
  action: string;
  observedAt: string;
  ok: true;
  data: TData;
  warnings: string[];
}

export interface FailureEnvelope<TData> {
  contractVersion: typeof CONTRACT_VERSION;
  tool: ToolName;
  action: string;
  observedAt: string;
  ok: false;
  data: TData;
  warnings: string[];
  error: { code: ErrorCode; message: string };
}

export type Envelope<TSuccess, TFailure> = SuccessEnvelope<TSuccess> | FailureEnvelope<TFailure>;

export function succeed<TData>(tool: ToolName, action: string, data: TData, warnings: string[] = []): SuccessEnvelope<TData> {
  return { contractVersion: CONTRACT_VERSION, tool, action, observedAt: new Date().toISOString(), ok: true, data, warnings };
}

export function fail<TData>(
  tool: ToolName,
  action: string,
  code: ErrorCode,
  message: string,
  data: TData,
  warnings: string[] = [],
): FailureEnvelope<TData> {
  return {
    contractVersion: CONTRACT_VERSION,
    tool,
    action,
    observedAt: new Date().toISOString(),
    ok: false,
    data,
    warnings,
    error: { code, message },
  };
}

/** What a pi-flow tool returns to Pi: model text, renderer details and the envelope kept apart. */
export interface FlowToolResult<TDetails> {
  content: { type: "text"; text: string }[];
  details: TDetails;
  structuredContent: JsonValue;
  isError: boolean;
  /** What the run's children spent, in Pi's shape: Pi's session totals add a tool result's usage. */
  usage?: Usage;
}

/** `isError` is derived from the envelope, never set by hand: a red row means the operation failed. */
export function toToolResult<TDetails>(
  envelope: Envelope<unknown, unknown>,
  text: string,
  details: TDetails,
): FlowToolResult<TDetails> {
  // Envelopes are built from JSON data only (schemas, strings, numbers), so they are JSON values;
  // the interfaces just cannot say so to the compiler.
  const structuredContent = envelope as unknown as JsonValue;
  return { content: [{ type: "text", text }], details, structuredContent, isError: !envelope.ok };
}

export const ErrorSchema = Type.Object({
  code: Type.Union(ERROR_CODE_LIST.map((code) => Type.Literal(code))),
  message: Type.String(),
});

/** The output schema of a tool: two envelope branches discriminated by `ok`. */
export function envelopeSchema(tool: ToolName, action: TSchema, successData: TSchema, failureData: TSchema) {
  const common = {
    contractVersion: Type.Literal(CONTRACT_VERSION),
    tool: Type.Literal(tool),
    action,
    observedAt: Type.String({ description: "ISO time the receipt was captured; not proof of current state." }),
    warnings: Type.Array(Type.String()),
  };
  return Type.Union([
    Type.Object({ ...common, ok: Type.Literal(true), data: successData }),
    Type.Object({ ...common, ok: Type.Literal(false), data: failureData, error: ErrorSchema }),
  ]);
}
