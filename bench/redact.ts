/**
 * Redaction throughput: figures and ratios from one run, no assertions.
 *
 *   npx node bench/redact.ts            # 4 MB of each kind of text
 *   BENCH_SCALE=0.25 npx node bench/redact.ts
 *
 * Each kind of text is cut into 8 KB messages, as owners pass them to the writer, and redacted
 * message by message. Two peers do similar work on the same messages:
 *   - `peer`: a minimal redactor, one regex for one key shape (`sk-…`), replaced. It bounds what a
 *     single pass over the text costs; `ratio.*_peer_vs_redact` is how many times slower full
 *     redaction is.
 *   - `naive`: the same rule patterns applied the obvious way, one `replace` pass per rule, with no
 *     head dispatch, gates or escaped views. `ratio.*_redact_vs_naive` above 1 means the engine is
 *     faster than that, even though it also reads escaped views. The adversarial figure is the slowest of the 1 MB near-match lines
 * from the tests: linear patterns keep it in the same order as ordinary text.
 *
 * `short.text_us`: one short text (~45 characters, each fresh), what most of a child's strings are.
 *
 * `array.*_ms`: a list of 200,000 short strings (`"item 0"` … , 2.5 MB of JSON), as `store("k", list)` or
 * a tools.* answer of that shape hands it over: the kept answer's `redactedJson`, and the store
 * line (`redactValueUnder`, then the journal line's `redactedJson`). Both run on Pi's main thread.
 *
 * `lines.child_session_us`: a pi child's session, as pi-flow writes it to the run's session.jsonl
 * (one redacted JSON line per entry: about a hundred strings, 9 KB, most of them the system prompt's
 * sections and the tools), against `JSON.stringify` of the same entries (the peer: the line
 * without redaction). Each child's entries are fresh objects, as every child's are.
 *
 * Prints a table and compares with bench/redact.baseline.json when present.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { redactedJson, redactText, redactValueUnder } from "../src/runs/index.ts";
import { AUTH_RULES } from "../src/runs/redact/auth.ts";
import { CLI_RULES } from "../src/runs/redact/cli.ts";
import { KEY_RULES } from "../src/runs/redact/keys.ts";
import { TOKEN_RULES } from "../src/runs/redact/tokens.ts";
import { buildSecretCases } from "../test/runs/fixtures/secret-corpus.ts";
import { bareWorkerSession, fauxModelRuntime, median } from "./support.ts";

const SCALE = Number(process.env.BENCH_SCALE ?? "1");
const TARGET_BYTES = Math.round(4 * 1024 * 1024 * SCALE);
const MESSAGE_BYTES = 8 * 1024;

const repeatTo = (unit: (i: number) => string): string => {
  const parts: string[] = [];
  let length = 0;
  for (let i = 0; length < TARGET_BYTES; i++) {
    const piece = unit(i);
    parts.push(piece);
    length += piece.length;
  }
  return parts.join("");
};

const INPUTS: Record<string, string> = {
  // An agent's answer: markdown prose with paths, versions and a little code.
  prose: repeatTo(
    (i) =>
      `## Step ${i}\nI read \`src/runs/writer.ts\` and the tests in test/runs/store.test.ts; the writer redacts each message before ` +
      `it appends it. Node v22.23.3 passes, données ✓ 数据. The token budget is max_tokens=4096 and the run id is flow_${i}_a1b2.\n\n`,
  ),
  // Source code an agent reads or writes.
  code: repeatTo(
    (i) =>
      `export function handler${i}(request: Request, options: { timeoutMs?: number } = {}): Promise<Response> {\n` +
      `  const token = request.headers.get("x-request-id") ?? crypto.randomUUID();\n  if (options.timeoutMs === undefined) return fetch(request);\n` +
      `  return withTimeout(fetch(request), options.timeoutMs, \`request \${token}\`); // see docs/runs.md#paging\n}\n`,
  ),
  // Tool calls as a diagnostics log holds them: JSON arguments holding escaped JSON (escaped views).
  "tool-json": repeatTo(
    (i) =>
      `tool write ${JSON.stringify({ path: `config/service-${i}.json`, content: JSON.stringify({ name: `svc-${i}`, replicas: 3, env: { LOG_LEVEL: "info", REGION: "eu-west-1" } }, null, 2) })}\n`,
  ),
  // The secret corpus itself: a secret every ~200 bytes, the worst case for replacement work.
  "secret-dense": repeatTo((i) => {
    const cases = buildSecretCases();
    return `${cases[i % cases.length]!.text}\n`;
  }),
};

function messagesOf(text: string): string[] {
  const out: string[] = [];
  for (let at = 0; at < text.length; at += MESSAGE_BYTES) out.push(text.slice(at, at + MESSAGE_BYTES));
  return out;
}

const PEER = /(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{20,}/g;
const peerRedact = (text: string): string => text.replace(PEER, "[REDACTED]");

const NAIVE = [...AUTH_RULES, ...TOKEN_RULES, ...KEY_RULES, ...CLI_RULES].map((rule) => rule.pattern);
const naiveRedact = (text: string): string => NAIVE.reduce((out, pattern) => out.replace(pattern, "[REDACTED]"), text);

/**
 * The messages of pass `pass`, each made distinct from every other pass's by a first line naming
 * the pass: redactText remembers texts it has read (src/runs/redact/texts.ts), so a pass over the
 * same messages again would measure the memo, not redaction (tens of thousands of MiB/s).
 */
const passMessages = (messages: readonly string[], pass: number): string[] => messages.map((m) => `pass ${pass}\n${m}`);
/** Every pass of every call has its own number, so no pass reads another's messages. */
let nextPass = 0;

/** Median seconds of `runs` passes over all messages, fresh for every pass, after a warm-up pass. */
function secondsPerPass(messages: readonly string[], redact: (text: string) => unknown, runs: number): number {
  for (const m of passMessages(messages, nextPass++)) redact(m);
  const samples: number[] = [];
  for (let r = 0; r < runs; r++) {
    const fresh = passMessages(messages, nextPass++);
    const start = performance.now();
    for (const m of fresh) redact(m);
    samples.push((performance.now() - start) / 1000);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)]!;
}

const figures: Record<string, number> = {};
const row = (name: string, value: number, unit: string) => {
  figures[name] = Number(value.toFixed(3));
  console.log(`${name.padEnd(36)} ${value.toFixed(3).padStart(12)} ${unit}`);
};

console.log(`redaction of ${(TARGET_BYTES / 1024 / 1024).toFixed(1)} MiB per input, ${MESSAGE_BYTES / 1024} KiB messages`);
for (const [name, text] of Object.entries(INPUTS)) {
  const messages = messagesOf(text);
  const mib = text.length / 1024 / 1024;
  const ours = mib / secondsPerPass(messages, redactText, 5);
  const peer = mib / secondsPerPass(messages, peerRedact, 5);
  row(`redact.${name}_MiBps`, ours, "MiB/s");
  row(`peer.${name}_MiBps`, peer, "MiB/s (one sk- regex)");
  const naive = mib / secondsPerPass(messages, naiveRedact, 3);
  row(`naive.${name}_MiBps`, naive, "MiB/s (one replace per rule)");
  row(`ratio.${name}_peer_vs_redact`, peer / ours, "x");
  row(`ratio.${name}_redact_vs_naive`, ours / naive, "x");
}

{
  const MB = 1 << 20;
  const fill = (unit: string) => unit.repeat(Math.ceil(MB / unit.length));
  const lines = [fill('\\"'), fill("\\\\"), fill("a:="), fill("--password --"), fill("mysql -p"), fill("_-.$"), `https://u:${"p".repeat(MB)}`, fill("password ")];
  let worst = Infinity;
  for (const line of lines) {
    const start = performance.now();
    redactText(line);
    worst = Math.min(worst, line.length / 1024 / 1024 / ((performance.now() - start) / 1000));
  }
  row("adversarial.slowest_1MB_line_MiBps", worst, "MiB/s");
}

{
  // One 1 MiB text (the prose above) with one Cyrillic letter in a key name, against the same text
  // without it: only the lines around a look-alike are read folded, so the ratio stays near 1.
  const plain = INPUTS.prose!.slice(0, 1 << 20);
  const middle = plain.indexOf("\n", plain.length >> 1) + 1;
  const withLetter = `${plain.slice(0, middle)}p\u0430ssword: hunter2-Tr0ub4dor\n${plain.slice(middle)}`;
  const withoutLetter = `${plain.slice(0, middle)}pxssword: hunter2-Tr0ub4dor\n${plain.slice(middle)}`;
  const secondsOf = (text: string): number => {
    const samples: number[] = [];
    for (let run = 0; run < 5; run++) {
      const fresh = `run ${run}\n${text}`; // a fresh text each run: redactText remembers texts it has read
      const start = performance.now();
      redactText(fresh);
      samples.push((performance.now() - start) / 1000);
    }
    return median(samples);
  };
  const folded = secondsOf(withLetter);
  const unfolded = secondsOf(withoutLetter);
  row("look_alike.one_letter_1MiB_ms", folded * 1000, "ms (one Cyrillic letter)");
  row("look_alike.none_1MiB_ms", unfolded * 1000, "ms (the same text, none)");
  row("ratio.look_alike_vs_none", folded / unfolded, "x");
}

{
  // Short texts, as most of a child's strings are (a tool's one-line answer, a path, a status):
  // what a call costs before any scanning, each text fresh so the memo is not what is measured.
  const SHORT = [
    "I read src/runs/writer.ts and the tests.",
    "Running npm test in /work/project now...",
    '{"path":"src/a.ts","line":12,"ok":true}',
    "The build passed; 3 files changed, 2 new",
    "git commit -m 'fix: handle empty input'",
    "Node v22.23.3 passes, données ✓ 数据 ok.",
  ];
  const CALLS = 20_000;
  const samples: number[] = [];
  for (let round = 0; round < 9; round++) {
    const texts = Array.from({ length: CALLS }, (_, i) => `${SHORT[i % SHORT.length]} ${round}.${i}`);
    const start = performance.now();
    for (const text of texts) redactText(text);
    samples.push(((performance.now() - start) / CALLS) * 1000);
  }
  row("short.text_us", median(samples.slice(2)), "µs per ~45-character text");
}

{
  // A list of short strings, parsed as it arrives from the sandbox (flat strings, each fresh).
  const ITEMS = Math.round(200_000 * SCALE);
  const listOf = (round: number): string[] => JSON.parse(JSON.stringify(Array.from({ length: ITEMS }, (_, i) => `item ${round}.${i}`))) as string[];
  const msOf = (redact: (list: string[]) => unknown): number => {
    const samples: number[] = [];
    for (let round = 0; round < 5; round++) {
      const list = listOf(nextPass++);
      const start = performance.now();
      redact(list);
      samples.push(performance.now() - start);
    }
    return median(samples);
  };
  row("array.short_strings_kept_ms", msOf((list) => redactedJson(list)), `ms (${ITEMS} items, a kept answer)`);
  row("array.short_strings_store_ms", msOf((list) => redactedJson({ t: "store", key: "k", value: redactValueUnder("k", list) })), `ms (${ITEMS} items, a store line)`);
}

{
  // One real child's session entries: a worker-role Pi session answered by the faux model.
  const dir = mkdtempSync(join(tmpdir(), "bench-redact-"));
  const { runtime, model } = await fauxModelRuntime(dir, ["answer 1"]);
  const session = await bareWorkerSession(dir, runtime, model);
  await session.prompt("item 1");
  const entries = JSON.stringify([session.sessionManager.getHeader(), ...session.sessionManager.getEntries()]);
  session.dispose();
  rmSync(dir, { recursive: true, force: true });
  const CHILDREN = 400;
  const perChild = (line: (entry: unknown) => unknown): number => {
    const samples: number[] = [];
    for (let round = 0; round < 7; round++) {
      const children = Array.from({ length: CHILDREN }, () => JSON.parse(entries) as unknown[]);
      const start = performance.now();
      for (const child of children) for (const entry of child) line(entry);
      samples.push(((performance.now() - start) / CHILDREN) * 1000);
    }
    return median(samples.slice(2)); // the first rounds warm the memo and the JIT
  };
  const ours = perChild(redactedJson);
  const peer = perChild((entry) => JSON.stringify(entry));
  row("lines.child_session_us", ours, "µs per child (redacted lines)");
  row("peer.child_session_us", peer, "µs per child (JSON.stringify)");
  row("ratio.child_session_redact_vs_peer", ours / peer, "x");
}

const baselinePath = join(import.meta.dirname, "redact.baseline.json");
if (existsSync(baselinePath) && SCALE === 1) {
  const baseline = JSON.parse(readFileSync(baselinePath, "utf8")) as { figures: Record<string, number> };
  console.log("\nagainst bench/redact.baseline.json (now / baseline):");
  for (const [name, value] of Object.entries(figures)) {
    const before = baseline.figures[name];
    if (before) console.log(`  ${name.padEnd(36)} ${(value / before).toFixed(2)}x`);
  }
}
if (process.env.BENCH_JSON) console.log(JSON.stringify({ node: process.version, scale: SCALE, figures }, null, 2));
