// Shapes of the helper library's metadata, shared by WORKFLOW_HELPERS and the declarations.

/** A JSON Schema object; `tsType` is json-schema-to-typescript's escape hatch for function types. */
export type SchemaObject = { [key: string]: unknown };

/** One entry of WORKFLOW_HELPERS: what external_help shows and what flow.d.ts declares. */
export interface HelperDoc {
  name: string;
  /** A TypeScript declaration without `declare function` / `declare const`. */
  signature: string;
  description: string;
}

export interface GlobalDoc extends HelperDoc {
  /** How the declaration is emitted: `declare function` or `declare const`. */
  kind: "function" | "const";
}

/** A helper: its documentation plus the VM-side JavaScript that implements it. */
export interface HelperDefinition extends HelperDoc {
  /**
   * A function declaration named `name`, compiled inside the VM the first time a script reads the
   * global, where it can use the prelude's `FlowError`, `stringify`, `parse` and `request`, and
   * every script global.
   */
  source: string;
}
