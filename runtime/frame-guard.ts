// QuickJS throws null when the memory limit leaves no room even for its out-of-memory error. A
// frame that unwinds frees its locals, so by the time such a null reaches the script's outermost
// frame the memory may be free again, and the prelude's uncaught() could not tell it from the
// script's own `throw null`. Each function of the script gets a catch that hands what it throws to
// uncaught() while its own frame still holds what it allocated. The text goes after a function's
// `{` and before its `}`, so no line moves; the columns it moves are kept for stacks (errors.ts).
import type { Node } from "acorn";
import type { ColumnShifts, Insertion } from "./errors.ts";
import { parseProgram, syntaxNodes } from "./parse.ts";

export interface GuardedBody {
  code: string;
  shifts: ColumnShifts;
  /** The wrapper class's name and its private method's, both unused by the script. */
  hook: string;
}

type FunctionNode = Node & { body: Node & { body?: Node[] } };

/** A body the guard wraps: `open` is just after its `{`, `close` at its `}`. */
interface GuardedBlock {
  open: number;
  close: number;
  statements: Node[];
}

/**
 * Whether a body's declarations are allowed in a function body but not in the try block the guard
 * moves them to: a function declared twice, or beside a var (any depth but nested functions) of its name.
 */
function clashes(statements: Node[]): boolean {
  const functions = new Set<string>();
  const vars = new Set<string>();
  for (const node of statements) {
    if (node.type === "FunctionDeclaration") {
      const name = (node as Node & { id?: { name: string } | null }).id?.name;
      if (name !== undefined && functions.has(name)) return true;
      if (name !== undefined) functions.add(name);
    }
  }
  if (functions.size === 0) return false;
  for (const node of syntaxNodes(statements, (inner) => !/Function/.test(inner.type))) {
    if (node.type !== "VariableDeclaration" || (node as Node & { kind: string }).kind !== "var") continue;
    for (const id of syntaxNodes((node as Node & { declarations: Node[] }).declarations.map((d) => (d as Node & { id: Node }).id))) {
      if (id.type === "Identifier") vars.add((id as Node & { name: string }).name);
    }
  }
  return [...functions].some((name) => vars.has(name));
}

/**
 * The last bodies guarded, least recently used first: a saved workflow, or a nested one, runs the
 * same body again and again. Bounded by characters too: a script may be 1 MiB, and sixteen such
 * bodies with their guarded copies would keep tens of megabytes on the host for good.
 */
const recent = new Map<string, GuardedBody>();
const RECENT_BODIES = 16;
const RECENT_CHARS = 4 * 1024 * 1024;
let recentChars = 0;

/** Characters the cache of guarded bodies holds (bodies and guarded copies). */
export function guardedCacheChars(): number {
  return recentChars;
}

/**
 * Adds a guarding catch to every function of the script with a block body; the body is unchanged
 * on failure to parse. `tree`, when given, is the body's syntax tree (parse.ts's, whose positions
 * are the body's), so the body is not parsed again.
 */
export function guardFrames(body: string, tree?: Node): GuardedBody {
  const known = recent.get(body);
  if (known) {
    recent.delete(body);
    recent.set(body, known);
    return known;
  }
  const guarded = guard(body, tree);
  recent.set(body, guarded);
  recentChars += body.length + guarded.code.length;
  for (const [oldest, kept] of recent) {
    if (recent.size <= RECENT_BODIES && recentChars <= RECENT_CHARS) break;
    recent.delete(oldest);
    recentChars -= oldest.length + kept.code.length;
  }
  return guarded;
}

function guard(body: string, tree: Node | undefined): GuardedBody {
  let program: Node;
  try {
    program = tree ?? parseProgram(body, undefined);
  } catch {
    return { code: body, shifts: new Map(), hook: "__flow_frames" };
  }
  const used = new Set<string>();
  const blocks: GuardedBlock[] = [];
  for (const node of syntaxNodes([program])) {
    if (node.type === "Identifier" || node.type === "PrivateIdentifier") used.add((node as Node & { name: string }).name);
    if (/^(FunctionDeclaration|FunctionExpression|ArrowFunctionExpression)$/.test(node.type) && (node as FunctionNode).body.type === "BlockStatement") {
      const block = (node as FunctionNode).body;
      blocks.push({ open: block.start + 1, close: block.end - 1, statements: block.body ?? [] });
    }
    // `static { ... }` of a class runs as a function of its own: its locals go when it ends.
    const staticOpen = node.type === "StaticBlock" ? afterStaticBrace(body, node.start) : undefined;
    if (staticOpen !== undefined) blocks.push({ open: staticOpen, close: node.end - 1, statements: (node as Node & { body: Node[] }).body });
  }
  let hook = "__flow_frames";
  for (let n = 1; used.has(hook) || used.has(`${hook}_error`); n++) hook = `__flow_frames${n}`;
  const open = "try{";
  const close = `}catch(${hook}_error){throw ${hook}.#${hook}(${hook}_error)}`;
  const inserts: Array<{ at: number; text: string }> = [];
  for (const block of blocks) {
    if (clashes(block.statements)) continue;
    inserts.push({ at: block.open, text: open }, { at: block.close, text: close });
  }
  inserts.sort((a, b) => a.at - b.at);
  const lineStarts = [0];
  for (let i = 0; i < body.length; i++) if (body[i] === "\n") lineStarts.push(i + 1);
  const shifts = new Map<number, Insertion[]>();
  let code = "";
  let from = 0;
  let line = 0;
  for (const { at, text } of inserts) {
    code += body.slice(from, at) + text;
    from = at;
    while (line + 1 < lineStarts.length && lineStarts[line + 1]! <= at) line++;
    const list = shifts.get(line + 1) ?? [];
    list.push({ column: at - lineStarts[line]!, length: text.length });
    shifts.set(line + 1, list);
  }
  return { code: code + body.slice(from), shifts, hook };
}

/** `static`, then white space and comments, then the block's `{`. */
const STATIC_HEAD = /static(?:\s|\/\/[^\n\r\u2028\u2029]*|\/\*[\s\S]*?\*\/)*\{/y;

/** Just after the `{` of a static block that starts at `start`. */
function afterStaticBrace(source: string, start: number): number | undefined {
  STATIC_HEAD.lastIndex = start;
  const head = STATIC_HEAD.exec(source);
  return head ? start + head[0].length : undefined;
}
