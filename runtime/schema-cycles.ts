/**
 * A schema that reaches itself again through keywords that apply to the same value, such as
 * `{ "$ref": "#" }` or `{ "anyOf": [{ "$ref": "#/$defs/a" }, …] }` with `a` pointing back: the
 * validator follows it until the stack overflows, on every answer that reaches it. The compiler
 * and the meta-schema accept it, so without this a child was launched and paid for, and then
 * failed with "Maximum call stack size exceeded". In runtime/, with nothing from Pi, so the schema
 * worker loads it precompiled (runtime/worker-js/) and a large schema is walked off Pi's thread.
 */

type Node = Record<string, unknown>;

const isNode = (value: unknown): value is Node => value !== null && typeof value === "object" && !Array.isArray(value);

/** The node a JSON pointer ("", "/$defs/a") names under `from`; undefined when it names none. */
function atPointer(from: unknown, pointer: string): Node | undefined {
  let node: unknown = from;
  for (const raw of pointer === "" ? [] : pointer.slice(1).split("/")) {
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

/** `id` made absolute against `base`, or `id` itself when either is not a URL. */
function absolute(id: string, base: string | undefined): string {
  try {
    return new URL(id, base).href;
  } catch {
    return id;
  }
}

/**
 * Resolves the `$ref`s of one schema that stay inside it: JSON pointers ("#", "#/$defs/a"),
 * `$anchor`s ("#A"), and the `$id`s it declares ("https://example.com/s", with a pointer or an
 * anchor after "#"), as the validator does; undefined for any other reference.
 */
function localResolver(root: unknown): (ref: string) => Node[] {
  const ids = new Map<string, Node>();
  const anchors = new Map<string, Node>();
  // A $dynamicRef may land on any $dynamicAnchor of its name, whichever the validator's scope picks.
  const dynamicAnchors = new Map<string, Node[]>();
  const rootId = isNode(root) && typeof root.$id === "string" ? absolute(root.$id, undefined) : undefined;
  walkSchema(root, (node) => {
    if (typeof node.$id === "string") {
      ids.set(node.$id, node);
      ids.set(absolute(node.$id, rootId), node);
    }
    if (typeof node.$anchor === "string") anchors.set(node.$anchor, node);
    if (typeof node.$dynamicAnchor === "string") {
      anchors.set(node.$dynamicAnchor, node);
      dynamicAnchors.set(node.$dynamicAnchor, [...(dynamicAnchors.get(node.$dynamicAnchor) ?? []), node]);
    }
    return false;
  });
  const inside = (from: unknown, fragment: string) => (fragment === "" || fragment.startsWith("/") ? atPointer(from, fragment) : anchors.get(fragment));
  const resolve = (ref: string) => {
    const hash = ref.indexOf("#");
    const base = hash < 0 ? ref : ref.slice(0, hash);
    const fragment = hash < 0 ? "" : ref.slice(hash + 1);
    if (base === "") return inside(root, fragment);
    const document = ids.get(base) ?? ids.get(absolute(base, rootId));
    return document === undefined ? undefined : inside(document, fragment);
  };
  return (ref) => {
    const found = resolve(ref);
    const fragment = ref.slice(ref.indexOf("#") + 1);
    const dynamic = ref.includes("#") ? (dynamicAnchors.get(fragment) ?? []) : [];
    return [...(found ? [found] : []), ...dynamic.filter((node) => node !== found)];
  };
}

/** Keywords whose value maps names to schemas that apply to the same object (draft-07's dependencies also holds arrays of names). */
const SAME_VALUE_MAPS = ["dependentSchemas", "dependencies"] as const;

/** The schemas `node` may apply to the very value it checks (anyOf's first branch is tried first, whatever the value). */
function sameValueSchemas(resolve: (ref: string) => Node[], node: Node): Node[] {
  const next: Node[] = [];
  if (typeof node.$ref === "string") next.push(...resolve(node.$ref));
  if (typeof node.$dynamicRef === "string") next.push(...resolve(node.$dynamicRef));
  for (const key of ["allOf", "anyOf", "oneOf"] as const) {
    const branches = node[key];
    if (Array.isArray(branches)) for (const branch of branches) if (isNode(branch)) next.push(branch);
  }
  for (const key of ["not", "if", "then", "else"] as const) if (isNode(node[key])) next.push(node[key]);
  for (const key of SAME_VALUE_MAPS) {
    const map = node[key];
    if (isNode(map)) for (const entry of Object.values(map)) if (isNode(entry)) next.push(entry);
  }
  return next;
}

/** Why `schema` cannot check any value that reaches a self-reference, or undefined when none. */
export function selfReferenceProblem(schema: unknown): string | undefined {
  const at = selfReferenceIn(schema);
  if (at === undefined) return undefined;
  return (
    `at ${at === "" ? "its root" : at.slice(0, 200)} it refers back to itself through $ref, $dynamicRef, allOf, anyOf, oneOf, not, if/then/else or dependentSchemas without reaching a property or an item, ` +
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
  // Every such loop passes through a $ref or $dynamicRef (a parsed schema is a tree): start only from those.
  const starts: Node[] = [];
  walkSchema(schema, (node) => {
    if (typeof node.$ref === "string" || typeof node.$dynamicRef === "string") starts.push(node);
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
  const resolve = localResolver(schema);
  // Depth-first over same-value edges: a node met again while still open closes a cycle.
  const state = new Map<Node, "open" | "done">();
  for (const start of starts) {
    if (state.has(start)) continue;
    const stack: Array<{ node: Node; next: Node[]; index: number }> = [{ node: start, next: sameValueSchemas(resolve, start), index: 0 }];
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
        stack.push({ node: target, next: sameValueSchemas(resolve, target), index: 0 });
      }
    }
  }
  return undefined;
}
