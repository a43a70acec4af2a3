/**
 * Pi's `prepareArguments` for the four tools: a top-level field the model sent as `null` is left
 * out before Pi validates the call. Models often fill every optional field, unused ones with null;
 * Pi's own coercion drops such a null only outside a union, and inside external_delegate's two
 * selector branches it made `subagent_type: null` fail the `not` rule and `model: null` the model
 * named "null". A required field sent as null is then missing, and validation names it.
 */
export function nullFieldsAsAbsent<Params>(args: unknown): Params {
  if (typeof args !== "object" || args === null || Array.isArray(args)) return args as Params;
  const entries = Object.entries(args);
  if (!entries.some(([, value]) => value === null)) return args as Params;
  return Object.fromEntries(entries.filter(([, value]) => value !== null)) as Params;
}
