/**
 * A schema that reaches itself again through keywords that apply to the same value, such as
 * `{ "$ref": "#" }` or `{ "anyOf": [{ "$ref": "#/$defs/a" }, …] }` with `a` pointing back: the
 * validator follows it until the stack overflows, on every answer that reaches it. The compiler
 * and the meta-schema accept it, so without this a child was launched and paid for, and then
 * failed with "Maximum call stack size exceeded".
 */

type Node = Record<string, unknown>;

const isNode = (value: unknown): value is Node => value !== null && typeof value === "object" && !Array.isArray(value);

/** The node a local `$ref` ("#", "#/$defs/a") names in `root`; undefined for any other reference. */
function resolveLocal(root: unknown, ref: string): Node | undefined {
  if (ref !== "#" && !ref.startsWith("#/")) return undefined;
  let node: unknown = root;
  for (const raw of ref === "#" ? [] : ref.slice(2).split("/")) {
    let key: string;
    try {
      key = decodeURIComponent(raw).replaceAll("~1", "/").replaceAll("~0", "~");
    } catch {
      return undefined;
    }
    if (node === null || typeof node !== "object" || !Object.hasOwn(node, key)) return undefined;
    node = (node as Node)[key];
  }
  return isNode(node) ? node : undefined;
}

/** The schemas `node` may apply to the very value it checks (anyOf's first branch is tried first, whatever the value). */
function sameValueSchemas(root: unknown, node: Node): Node[] {
  const next: Node[] = [];
  if (typeof node.$ref === "string") {
    const target = resolveLocal(root, node.$ref);
    if (target) next.push(target);
  }
  for (const key of ["allOf", "anyOf", "oneOf"] as const) {
    const branches = node[key];
    if (Array.isArray(branches)) for (const branch of branches) if (isNode(branch)) next.push(branch);
  }
  for (const key of ["not", "if", "then", "else"] as const) if (isNode(node[key])) next.push(node[key]);
  return next;
}

/** Why `schema` cannot check any value that reaches a self-reference, or undefined when none. */
export function selfReferenceProblem(schema: unknown): string | undefined {
  const at = selfReferenceIn(schema);
  if (at === undefined) return undefined;
  return (
    `at ${at === "" ? "its root" : at.slice(0, 200)} it refers back to itself through $ref, allOf, anyOf, oneOf, not or if/then/else without reaching a property or an item, ` +
    "so checking a value there would never end"
  );
}

/** Where in `schema` (a JSON pointer) a reference leads back to itself through the same value, or undefined. */
export function selfReferenceIn(schema: unknown): string | undefined {
  const pointers = new Map<Node, string>();
  const walk: Array<{ value: unknown; at: string }> = [{ value: schema, at: "" }];
  while (walk.length > 0) {
    const { value, at } = walk.pop()!;
    if (value === null || typeof value !== "object") continue;
    if (isNode(value) && !pointers.has(value)) pointers.set(value, at);
    for (const [key, child] of Object.entries(value)) walk.push({ value: child, at: `${at}/${key.replaceAll("~", "~0").replaceAll("/", "~1")}` });
  }
  // Depth-first over same-value edges: a node met again while still open closes a cycle.
  const state = new Map<Node, "open" | "done">();
  for (const start of pointers.keys()) {
    if (state.has(start)) continue;
    const stack: Array<{ node: Node; next: Node[]; index: number }> = [{ node: start, next: sameValueSchemas(schema, start), index: 0 }];
    state.set(start, "open");
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      if (top.index === top.next.length) {
        state.set(top.node, "done");
        stack.pop();
        continue;
      }
      const target = top.next[top.index++]!;
      const seen = state.get(target);
      if (seen === "open") return pointers.get(target) ?? "";
      if (seen === undefined) {
        state.set(target, "open");
        stack.push({ node: target, next: sameValueSchemas(schema, target), index: 0 });
      }
    }
  }
  return undefined;
}
