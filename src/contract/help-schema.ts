import { Type, type Static } from "@sinclair/typebox";
import { envelopeSchema } from "./envelope.ts";

/** Topic, tool and harness are free strings so that an unknown one is a typed selection_invalid. */
export const HelpInputSchema = Type.Object(
  {
    topic: Type.String({
      minLength: 1,
      description: "contracts, workflows, harnesses, limits, errors or roles.",
    }),
    tool: Type.Optional(Type.String({ minLength: 1, description: "With topic contracts: one tool's full contract." })),
    harness: Type.Optional(Type.String({ minLength: 1, description: "With topic harnesses: one harness." })),
  },
  { additionalProperties: false },
);

export type HelpInput = Static<typeof HelpInputSchema>;

export const ContractIndexSchema = Type.Object({
  contractVersion: Type.Literal(1),
  tools: Type.Array(Type.Object({ name: Type.String(), registered: Type.Boolean(), purpose: Type.String() })),
  rules: Type.Array(Type.String()),
  more: Type.String(),
});

export const ToolContractSchema = Type.Object({
  tool: Type.String(),
  contractVersion: Type.Literal(1),
  registered: Type.Boolean(),
  actions: Type.Array(Type.String()),
  purpose: Type.String(),
  input: Type.Unknown({ description: "The tool's input JSON Schema, as registered." }),
  output: Type.Unknown({ description: "The tool's output JSON Schema, as registered." }),
  semantics: Type.Array(Type.String()),
  examples: Type.Array(Type.Object({ title: Type.String(), input: Type.Unknown() })),
  helpers: Type.Optional(Type.Unknown({ description: "external_workflow: WORKFLOW_HELPERS (functions, globals, agentOptions)." })),
});

export const HarnessStateSchema = Type.Object(
  {
    name: Type.String(),
    available: Type.Boolean(),
    detail: Type.String({ description: "What was found (binary, version), or why it is not available and how to fix that." }),
    binary: Type.Optional(Type.String()),
    version: Type.Optional(Type.String()),
  },
  { description: "A harness's state when help was asked: a CLI harness's preflight result." },
);

export const SavedWorkflowSchema = Type.Object({
  name: Type.String({ description: "Pass as external_workflow's workflow." }),
  source: Type.Union([Type.Literal("project"), Type.Literal("user"), Type.Literal("shipped")]),
  description: Type.Optional(Type.String()),
  args: Type.Optional(Type.Unknown({ description: "meta.args: the JSON Schema external_workflow's args must match." })),
  problem: Type.Optional(Type.String({ description: "Why the file cannot run (script_invalid); it is listed but not usable." })),
});

export const RoleSchema = Type.Object({
  name: Type.String({ description: "Pass as external_delegate's role, or agent()'s." }),
  source: Type.Union([Type.Literal("builtin"), Type.Literal("project"), Type.Literal("user")]),
  description: Type.String(),
  tools: Type.Optional(Type.Array(Type.String())),
  problem: Type.Optional(Type.String({ description: "Why the role file cannot be used (configuration_invalid)." })),
});

export const HelpPayloadSchema = Type.Union([
  Type.Object({ topic: Type.Literal("contracts"), index: ContractIndexSchema }),
  Type.Object({ topic: Type.Literal("contracts"), tool: Type.String(), contract: ToolContractSchema }),
  Type.Object({
    topic: Type.String(),
    harness: Type.Optional(Type.String()),
    tool: Type.Optional(Type.String()),
    text: Type.String(),
    state: Type.Optional(HarnessStateSchema),
    harnesses: Type.Optional(Type.Array(HarnessStateSchema, { description: "Topic harnesses without harness: every harness's state." })),
    workflows: Type.Optional(Type.Array(SavedWorkflowSchema, { description: "Topic workflows: the saved workflows this session can run." })),
    roles: Type.Optional(Type.Array(RoleSchema, { description: "Topic roles: the roles available here, built in and from role files." })),
  }),
]);

export type HelpPayload = Static<typeof HelpPayloadSchema>;

export const HelpOutputSchema = envelopeSchema("external_help", Type.Literal("help"), HelpPayloadSchema, Type.Null());
