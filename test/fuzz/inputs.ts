// Seeded input mutation for the fuzz suite: every case is reproducible from (seed, tool, index).
// Inputs start from a valid call of each tool and take one to three mutations: keys dropped,
// unknown keys added, values replaced by awkward ones (empty, NUL, huge, deep, wrong type).

/** sfc32: small, fast and seedable; the same seed gives the same cases on every machine. */
export function prng(seed: number): () => number {
  let a = 0x9e3779b9;
  let b = 0x243f6a88;
  let c = 0xb7e15162;
  let d = seed >>> 0;
  const next = (): number => {
    a >>>= 0;
    b >>>= 0;
    c >>>= 0;
    d >>>= 0;
    const t = (a + b) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    d = (d + 1) | 0;
    const r = (t + d) | 0;
    c = (c + r) | 0;
    return (r >>> 0) / 4294967296;
  };
  for (let i = 0; i < 16; i++) next();
  return next;
}

export type Random = () => number;
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

function deep(levels: number, leaf: Json = 1): Json {
  let value: Json = leaf;
  for (let i = 0; i < levels; i++) value = i % 2 === 0 ? [value] : { a: value };
  return value;
}

/** Values that have broken parsers, paths, limits and renderers before. */
function awkward(random: Random): Json {
  const makers: Array<() => Json> = [
    () => "",
    () => " ",
    () => "\u0000",
    () => `a\u0000b`,
    () => "line\nbreak\ttab\r",
    () => "x".repeat(pick(random, [199, 200, 201, 4096, 20_000])),
    () => "\ud800 lone surrogate",
    () => "😀".repeat(50),
    () => "../../../../etc/passwd",
    () => "/definitely/not/here",
    () => "%s%n%x{0}${x}",
    () => "__proto__",
    () => "constructor",
    () => "wf_00000000a_0000000000",
    () => "ag_zzzzzzzzz_zzzzzzzzzz",
    () => "eyJub3QiOiJhIGN1cnNvciJ9",
    () => 0,
    () => -1,
    () => 1.5,
    () => 1e308,
    () => 2 ** 53,
    () => true,
    () => false,
    () => null,
    () => [],
    () => ({}),
    () => [1, "two", null],
    // Deeper tool arguments overflow Pi's own provider layer before any tool sees them; deeper
    // values reach pi-flow through scripts (HOSTILE_SCRIPTS).
    () => deep(pick(random, [50, 200])),
    () => JSON.parse('{"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}}}') as Json,
    () => Array.from({ length: 1000 }, (_, i) => i),
  ];
  return pick(random, makers)();
}

/**
 * Scripts a hostile or careless author writes: each must end its own run with a typed outcome.
 * `slow` ones (memory bombs, floods) run once each in hostile.test.ts; the rest also seed mutations.
 */
export const HOSTILE_SCRIPTS: ReadonlyArray<{ source: string; slow: boolean }> = [
  { source: "let v = 1; for (let i = 0; i < 5000; i++) v = [v]; return v;", slow: false },
  { source: "let v = 1; for (let i = 0; i < 100000; i++) v = { a: v }; store('k', v); return 1;", slow: true },
  { source: "let v = 1; for (let i = 0; i < 5000; i++) v = [v]; await agent({ role: 'explorer', prompt: 'p', outputSchema: { a: v } });", slow: false },
  { source: "let v = 1; for (let i = 0; i < 5000; i++) v = [v]; return await tools.external_help({ topic: v });", slow: false },
  { source: "return 'x'.repeat(2 ** 29);", slow: true },
  { source: "const s = 'x'.repeat(2 ** 24); const parts = []; for (;;) parts.push(s + parts.length);", slow: true },
  { source: "throw new Error('E'.repeat(5000000));", slow: true },
  { source: "const e = new Error('x'); e.code = 'C'.repeat(100000); e.name = '\\u0000'.repeat(1000); throw e;", slow: false },
  { source: "const a = {}; a.self = a; return a;", slow: false },
  { source: "const a = []; a.push(a); store('cyclic', a);", slow: false },
  { source: "return { get boom() { throw new Error('getter'); } };", slow: false },
  { source: "return new Proxy({}, { ownKeys() { throw new Error('proxy'); } });", slow: false },
  { source: "return { toJSON() { let v = 1; for (let i = 0; i < 3000; i++) v = [v]; return v; } };", slow: false },
  { source: "return Symbol('s');", slow: false },
  { source: "return 10n;", slow: false },
  { source: "return { big: 10n };", slow: false },
  { source: "for (let i = 0; i < 2e5; i++) Promise.resolve().then(() => {}); return 1;", slow: true },
  { source: "const ps = []; for (let i = 0; i < 100000; i++) ps.push(new Promise(() => {})); return 1;", slow: true },
  { source: "function f() { return f() + 1; } return f();", slow: false },
  { source: "async function f() { return await f(); } return await f();", slow: false },
  { source: "store('__proto__', { injected: true }); store('constructor', 1); return load('__proto__');", slow: false },
  { source: "export const meta = { limits: { hostBytes: 1048576, agentCalls: 64 } };\nconst big = 'x'.repeat(100000); const all = []; for (let i = 0; i < 40; i++) all.push(agent({ role: 'explorer', prompt: big + i, context: { mode: 'none' } })); return (await Promise.allSettled(all)).length;", slow: true },
  { source: "console.log('y'.repeat(200000)); return 1;", slow: false },
  { source: "export const meta = { limits: { cpuMs: 200 } };\nfor (;;) {}", slow: true },
  { source: "await new Promise(() => {});", slow: true },
  { source: "return JSON.parse('['.repeat(100000) + ']'.repeat(100000));", slow: false },
  { source: "Object.prototype.toJSON = () => { throw new Error('patched'); }; return { a: 1 };", slow: false },
  { source: "JSON.stringify = () => '{'; return { a: 1 };", slow: false },
  { source: "globalThis.agent = null; return typeof tools;", slow: false },
  { source: "return undefined;", slow: false },
];

const FAST_HOSTILE = HOSTILE_SCRIPTS.filter((script) => !script.slow).map((script) => script.source);

/** A valid call of each tool, which mutations start from. */
function seedInput(tool: string, random: Random, knownRunIds: readonly string[]): Record<string, Json> {
  switch (tool) {
    case "external_delegate":
      return pick<Record<string, Json>>(random, [
        { role: "explorer", description: "fuzz", prompt: "Look around." },
        { role: "worker", description: "fuzz", prompt: "Do a thing.", context: { mode: "none" } },
        { subagent_type: "nobody", description: "fuzz", prompt: "p" },
        { role: "reviewer", description: "fuzz", prompt: "Review.", context: { mode: "recent", turns: 1 }, timeoutMs: 60_000 },
      ]);
    case "external_workflow":
      return pick<Record<string, Json>>(random, [
        { script: "return 1;" },
        { script: pick(random, FAST_HOSTILE) },
        { workflow: "review", args: { target: "src" } },
        { workflow: "map", args: {} },
        { script: "const r = await agent({ role: 'explorer', prompt: 'p', context: { mode: 'none' } }); return r.value;", description: "fuzz" },
      ]);
    case "external_runs": {
      const runId = knownRunIds.length > 0 && random() < 0.7 ? pick(random, knownRunIds) : "ag_0000000aa_0000000000";
      return pick<Record<string, Json>>(random, [
        { action: "list" },
        { action: "list", limit: 2 },
        { action: "inspect", runIds: [runId] },
        { action: "inspect", runIds: [runId], view: pick(random, ["summary", "launch", "output", "diagnostics", "final"]), limitBytes: 64 },
        { action: "wait", runIds: [runId], timeoutMs: 0 },
        { action: "cancel", runIds: [runId] },
      ]);
    }
    default:
      return pick<Record<string, Json>>(random, [
        { topic: "contracts" },
        { topic: "contracts", tool: pick(random, ["external_delegate", "external_workflow", "external_runs", "external_help"]) },
        { topic: "harnesses", harness: pick(random, ["pi", "claude", "codex", "replay"]) },
        { topic: pick(random, ["limits", "errors", "workflows", "roles", "nope"]) },
      ]);
  }
}

const KEYS = [
  "role", "subagent_type", "harness", "description", "prompt", "context", "background", "model", "outputSchema", "timeoutMs", "cwd",
  "workflow", "script", "args", "action", "runIds", "view", "limitBytes", "cursor", "workflowCursor", "limit", "mode", "topic", "tool",
];

/** One mutated input. `background` stays off: a background child's completion would start parent turns of its own. */
export function mutatedInput(tool: string, random: Random, knownRunIds: readonly string[]): Record<string, Json> {
  const input: Record<string, Json> = { ...seedInput(tool, random, knownRunIds) };
  const mutations = 1 + Math.floor(random() * 3);
  for (let m = 0; m < mutations; m++) {
    const keys = Object.keys(input);
    const roll = random();
    if (roll < 0.15 && keys.length > 0) delete input[pick(random, keys)];
    else if (roll < 0.25) set(input, pick(random, ["extra", "__proto__", "constructor", "🙂"]), awkward(random));
    else if (roll < 0.75) set(input, random() < 0.7 && keys.length > 0 ? pick(random, keys) : pick(random, KEYS), awkward(random));
    else if (roll < 0.9 && typeof input.script === "string") input.script = mutateText(input.script, random);
    else if (typeof input.prompt === "string") input.prompt = mutateText(input.prompt, random);
  }
  if (input.background !== undefined) delete input.background;
  return input;
}

/** An own, enumerable key, even "__proto__", so it reaches the tool call's JSON. */
function set(input: Record<string, Json>, key: string, value: Json): void {
  Object.defineProperty(input, key, { value, enumerable: true, writable: true, configurable: true });
}

function mutateText(text: string, random: Random): string {
  const at = Math.floor(random() * (text.length + 1));
  return pick(random, [
    () => text.slice(0, at),
    () => text.slice(0, at) + pick(random, ["{", "}", "(", "`", "'", "\\", "\u0000", "await ", "return ", "export ", "import x from 'y';"]) + text.slice(at),
    () => text + "\n" + pick(random, FAST_HOSTILE),
    () => "export const meta = { limits: { agentCalls: 1e9 } };\n" + text,
    () => "export const apiVersion = 2;\n" + text,
  ])();
}
