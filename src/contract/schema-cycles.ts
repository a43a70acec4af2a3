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

/** Keywords whose value is data, not a schema: an enum of a million file names is not walked. */
const DATA_KEYWORDS = new Set(["enum", "const", "default", "examples"]);

/** The schema objects of `schema` that walk on, skipping data keywords; `visit` may stop the walk with true. */
function walkSchema(schema: unknown, visit: (node: Node, at: () => string) => boolean): void {
  // Each entry's path is a link to its parent's, so a deep schema is not copied at every level.
  type Path = { key: string; up: Path } | undefined;
  const pointer = (path: Path) => {
    const keys: string[] = [];
    for (let step = path; step !== undefined; step = step.up) keys.push(`/${step.key.replaceAll("~", "~0").replaceAll("/", "~1")}`);
    return keys.reverse().join("");
  };
  const walk: Array<{ value: object; path: Path }> = [];
  if (schema !== null && typeof schema === "object") walk.push({ value: schema, path: undefined });
  while (walk.length > 0) {
    const { value, path } = walk.pop()!;
    if (isNode(value) && visit(value, () => pointer(path))) return;
    for (const key of Object.keys(value)) {
      const child = (value as Node)[key];
      if (child === null || typeof child !== "object" || (isNode(value) && DATA_KEYWORDS.has(key))) continue;
      walk.push({ value: child, path: { key, up: path } });
    }
  }
}

/** Where in `schema` (a JSON pointer) a reference leads back to itself through the same value, or undefined. */
export function selfReferenceIn(schema: unknown): string | undefined {
  // Every such loop passes through a $ref (a parsed schema is a tree): start only from those.
  const starts: Node[] = [];
  walkSchema(schema, (node) => {
    if (typeof node.$ref === "string") starts.push(node);
    return false;
  });
  const looped = loopIn(schema, starts);
  if (looped === undefined) return undefined;
  let where = "";
  walkSchema(schema, (node, at) => {
    if (node !== looped) return false;
    where = at();
    return true;
  });
  return where;
}

/** A node that same-value edges from `starts` lead back to while it is still open, or undefined. */
function loopIn(schema: unknown, starts: Node[]): Node | undefined {
  // Depth-first over same-value edges: a node met again while still open closes a cycle.
  const state = new Map<Node, "open" | "done">();
  for (const start of starts) {
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
      if (seen === "open") return target;
      if (seen === undefined) {
        state.set(target, "open");
        stack.push({ node: target, next: sameValueSchemas(schema, target), index: 0 });
      }
    }
  }
  return undefined;
}
