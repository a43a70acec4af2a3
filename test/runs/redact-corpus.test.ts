import { readFileSync } from "node:fs";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { renderContext, selectContext } from "../../src/parent-context/modes.ts";
import { captureParentSnapshot } from "../../src/parent-context/snapshot.ts";
import { runFiles } from "../../src/runs/home.ts";
import { redactText, redactValue } from "../../src/runs/index.ts";
import { buildInnocentCases } from "./fixtures/innocent-corpus.ts";
import { buildSecretCases, type SecretCase } from "./fixtures/secret-corpus.ts";
import { sandboxPerFile, type Sandbox } from "./helpers.ts";

const SECRETS = buildSecretCases();
const INNOCENTS = buildInnocentCases();

/**
 * A secret leaks when any piece of 8 characters of it survives (the whole of a shorter one), not
 * only the whole: a redaction that stopped halfway would still hand out most of a key. A piece
 * that the text around the secret also holds (`production` in both `NODE_ENV=production` and a
 * Braintree token) proves nothing and is not counted.
 */
function leaks(redacted: string | Searched, secret: string, original = ""): boolean {
  const width = Math.min(8, secret.length);
  const has =
    typeof redacted === "string" ? (piece: string) => redacted.includes(piece) : width === 8 ? (piece: string) => redacted.pieces.has(piece) : (piece: string) => redacted.text.includes(piece);
  // The context is made only for a piece found: most secrets have none, and the original may be a megabyte.
  let context: string | undefined;
  for (let at = 0; at + width <= secret.length; at++) {
    const piece = secret.slice(at, at + width);
    if (has(piece) && !(context ??= original.split(secret).join("\u0000")).includes(piece)) return true;
  }
  return false;
}

/** A long text read for hundreds of secrets: its 8-character pieces are listed once, and each of a secret's is looked up. */
interface Searched {
  readonly text: string;
  readonly pieces: ReadonlySet<string>;
}

function searched(text: string): Searched {
  const pieces = new Set<string>();
  for (let at = 0; at + 8 <= text.length; at++) pieces.add(text.slice(at, at + 8));
  return { text, pieces };
}

/** How a text reaches redaction: as it is, inside a JSON string, inside JSON inside JSON. */
const VARIANTS: Record<string, { wrap: (text: string) => string; unwrap: (redacted: string) => string }> = {
  plain: { wrap: (t) => t, unwrap: (r) => r },
  "json-string": {
    wrap: (t) => JSON.stringify({ content: t }),
    unwrap: (r) => (JSON.parse(r) as { content: string }).content,
  },
  "twice-escaped": {
    wrap: (t) => JSON.stringify({ args: JSON.stringify({ content: t }) }),
    unwrap: (r) => (JSON.parse((JSON.parse(r) as { args: string }).args) as { content: string }).content,
  },
};

interface Score {
  recall: number;
  missed: string[];
  invalidJson: string[];
}

function score(variant: keyof typeof VARIANTS): Score {
  const { wrap, unwrap } = VARIANTS[variant]!;
  const missed: string[] = [];
  const invalidJson: string[] = [];
  for (const c of SECRETS) {
    const out = redactText(wrap(c.text)).text;
    let back: string;
    try {
      back = unwrap(out);
    } catch {
      invalidJson.push(`${c.provider}/${c.context}`);
      continue;
    }
    if (leaks(back, c.secret, c.text)) missed.push(`${c.provider}/${c.context}: ${back.slice(0, 160)}`);
  }
  return { recall: (SECRETS.length - missed.length - invalidJson.length) / SECRETS.length, missed, invalidJson };
}

describe("the redaction corpus", () => {
  it("is large and broad: at least 200 secrets over at least 30 providers and formats, and 100 look-alikes", () => {
    expect(SECRETS.length).toBeGreaterThanOrEqual(200);
    expect(new Set(SECRETS.map((c) => c.provider)).size).toBeGreaterThanOrEqual(30);
    expect(INNOCENTS.length).toBeGreaterThanOrEqual(100);
    // What an attacker found reaching the model or the disk is all in it.
    const providers = new Set(SECRETS.map((c) => c.provider));
    for (const required of [
      "dotenv-db-pass", "dotenv-encryption-key", "db-url-redis", "curl-user", "mysql-p", "sshpass", "gcp-oauth",
      "sendgrid", "slack-app", "slack-webhook", "stripe-webhook", "jwt-unsigned", "digitalocean", "shopify",
      "telegram", "discord", "square", "mailgun", "azure-storage", "docker-config", "ini-password-word", "escaped-json", "json-list",
    ]) {
      expect(providers, required).toContain(required);
    }
    // Every secret is realistic text around a value, never the bare value.
    for (const c of SECRETS) expect(c.text.length, c.provider).toBeGreaterThan(c.secret.length);
  });

  for (const variant of Object.keys(VARIANTS)) {
    it(`recalls at least 99% of the secrets (${variant}), and keeps JSON valid`, () => {
      const result = score(variant);
      console.log(`redaction recall (${variant}): ${(result.recall * 100).toFixed(2)}% of ${SECRETS.length}; missed ${result.missed.length}`);
      expect(result.invalidJson).toEqual([]);
      expect(result.recall, result.missed.join("\n")).toBeGreaterThanOrEqual(0.99);
    });

    it(`changes none of the look-alikes (${variant})`, () => {
      const { wrap } = VARIANTS[variant]!;
      const changed = INNOCENTS.filter((c) => redactText(wrap(c.text)).changed).map((c) => `${c.kind}: ${c.text.slice(0, 80)}`);
      console.log(`redaction false positives (${variant}): ${changed.length} of ${INNOCENTS.length}`);
      expect(changed).toEqual([]);
    });
  }

  it("is idempotent on every secret case", () => {
    for (const c of SECRETS) {
      const once = redactText(c.text).text;
      expect(redactText(once), c.provider).toEqual({ text: once, changed: false });
    }
  });

  it("keeps the context around the secret readable", () => {
    const keep = (provider: string, context: string, part: string) => {
      const c = SECRETS.find((x) => x.provider === provider && x.context === context)!;
      expect(redactText(c.text).text).toContain(part);
    };
    keep("db-url-redis", "log", "redis://default:[REDACTED]@10.0.3.7:6379");
    keep("dotenv-db-pass", "env", "DB_PASS=[REDACTED]\nLOG_LEVEL=info");
    keep("curl-user", "shell", "curl -u admin:[REDACTED] https://jenkins.internal/api/json");
    keep("slack-webhook", "env", "https://hooks.slack.com/services/[REDACTED]");
    keep("escaped-json", "launch-prompt", `{\\"apiKey\\": \\"[REDACTED]\\"}`);
    keep("escaped-json", "twice-escaped", `HMAC_SECRET = \\\\\\"[REDACTED]\\\\\\"`);
  });
});

describe("secrets holding escape characters", () => {
  it("go whole at every JSON depth, and every document stays valid JSON", () => {
    const password = "pa$ss\\wo/rd\u00e9" + "1";
    const nest = (value: object, depth: number): string => {
      let text = JSON.stringify(value);
      for (let i = 1; i < depth; i++) text = JSON.stringify({ inner: text });
      return text;
    };
    const unnest = (text: string, depth: number): unknown => {
      let value = JSON.parse(text) as { inner?: string };
      for (let i = 1; i < depth; i++) value = JSON.parse(value.inner!) as { inner?: string };
      return value;
    };
    for (let depth = 1; depth <= 4; depth++) {
      for (const value of [
        { password },
        { command: `mysql -uroot -p${password} app` },
        { url: `postgres://app:${password}@db/app` },
        { env: `DB_PASS=${password}\nNEXT=1` },
      ]) {
        const out = redactText(nest(value, depth)).text;
        const back = JSON.stringify(unnest(out, depth));
        expect(back, `depth ${depth}: ${out}`).not.toContain("wo/rd");
        expect(back).toContain("[REDACTED]");
      }
    }
  });
});

describe("redactValue on the corpus", () => {
  it("redacts every case held in a JSON value, and a value under a secret-named key whole", () => {
    for (const c of SECRETS) {
      const { value } = redactValue({ note: c.text, nested: [{ text: c.text }] });
      expect(leaks(JSON.stringify(value), c.secret, JSON.stringify(c.text)) || leaks((value as { note: string }).note, c.secret, c.text), c.provider).toBe(false);
    }
    expect(redactValue({ DB_PASS: "orchid-7Hk2", auth: Buffer.from("ci:pw-1234").toString("base64") }).value).toEqual({
      DB_PASS: "[REDACTED]",
      auth: "[REDACTED]",
    });
  });
});

/** Parent session entries whose assistant turns called tools with the corpus texts as arguments. */
/** A parent's branch as a Pi session holds it: each entry names the one before it (Pi projects the branch from its leaf). */
function parentEntries(cases: readonly SecretCase[]): SessionEntry[] {
  const entries: SessionEntry[] = [];
  const linked = (id: string) => ({ id, parentId: entries.at(-1)?.id ?? null });
  cases.forEach((c, index) => {
    const message = (m: object) => ({ type: "message", ...linked(`e${entries.length}`), message: m }) as unknown as SessionEntry;
    entries.push(message({ role: "user", content: [{ type: "text", text: `step ${index}` }] }));
    entries.push(
      message({
        role: "assistant",
        content: [
          { type: "text", text: "Writing the config." },
          { type: "toolCall", id: `t${index}`, name: "write", arguments: { path: "config/app.json", content: JSON.stringify({ note: c.text }) } },
        ],
      }),
    );
    entries.push(message({ role: "toolResult", toolName: "write", content: [{ type: "text", text: `wrote ${c.text.length} bytes` }] }));
  });
  entries.push({ type: "message", ...linked("last"), message: { role: "user", content: [{ type: "text", text: "now delegate" }] } } as unknown as SessionEntry);
  return entries;
}

describe("everything persisted or returned", () => {
  let box: Sandbox;
  sandboxPerFile((fresh) => (box = fresh));

  it("launch evidence: a child's prompt with the rendered parent conversation keeps no secret, on disk or in the launch view", () => {
    const snapshot = captureParentSnapshot(parentEntries(SECRETS));
    const prompt = `${renderContext(selectContext(snapshot, { mode: "full" }), snapshot.capturedAt)}\n\nTask: review the configs.`;
    // The rendered prompt really holds the secrets as twice-escaped JSON (tool args holding JSON text).
    expect(prompt).toContain(JSON.stringify(JSON.stringify({ note: SECRETS[0]!.text })).slice(1, 40));
    const store = box.store();
    const writer = store.create({ kind: "agent", task: { description: "review" }, background: false, launch: { prompt } });
    const onDisk = readFileSync(runFiles(store.scope, writer.runId).journal, "utf8");
    const saved = (JSON.parse(onDisk.slice(0, onDisk.indexOf("\n"))) as { launch: { prompt: string } }).launch.prompt;
    const view = store.inspectSingle(writer.runId, "launch", { limitBytes: 4 * 1024 * 1024 }).page.text;
    const texts = [saved, view, onDisk].map(searched);
    const leaked = SECRETS.filter((c) => texts.some((text) => leaks(text, c.secret, prompt)));
    expect(leaked.map((c) => `${c.provider}/${c.context}`)).toEqual([]);
    writer.settle({ outcome: "succeeded", value: "ok" });
  });

  it("output, diagnostics, journal values and errors keep no secret, and no page of them holds a piece of one", async () => {
    const store = box.store();
    const writer = store.create({ kind: "workflow", task: { description: "all evidence" }, background: false });
    const sample = SECRETS.filter((_, i) => i % 3 === 0);
    const all = sample.map((c) => c.text).join("\n");
    for (const c of sample) {
      writer.appendOutput(c.text);
      writer.appendDiagnostic({ level: "info", message: `tool bash ${JSON.stringify({ command: c.text })}` });
      // A code can come from a script's thrown error or a tool's answer: it is cleaned like a message.
      writer.appendDiagnostic({ level: "error", code: c.text, message: "a failure whose code is a secret" });
      writer.journal({ t: "store", key: c.provider, value: { text: c.text, args: JSON.stringify({ content: c.text }) } });
    }
    writer.settle({ outcome: "failed", error: { code: "failed", message: sample.map((c) => c.text).join("\n") } });
    for (const view of ["output", "diagnostics", "summary"] as const) {
      let cursor: string | undefined;
      let whole = "";
      do {
        // Small pages: a secret would straddle page boundaries if it were paged before redaction.
        const page = store.inspectSingle(writer.runId, view, cursor ? { limitBytes: 512, cursor } : { limitBytes: 512 });
        whole += page.page.text;
        for (const c of sample) expect(leaks(page.page.text, c.secret, all), `${view} page: ${c.provider}`).toBe(false);
        cursor = page.page.nextCursor;
      } while (cursor);
      const wholeText = searched(whole);
      for (const c of sample) expect(leaks(wholeText, c.secret, all), `${view}: ${c.provider}`).toBe(false);
    }
    await store.idle(); // the record is rewritten by the group commit
    const files = runFiles(store.scope, writer.runId);
    for (const file of [files.journal, files.output, files.diagnostics, files.record]) {
      const text = searched(readFileSync(file, "utf8"));
      for (const c of sample) expect(leaks(text, c.secret, all), `${file}: ${c.provider}`).toBe(false);
    }
  });
});

describe("linear time", () => {
  // Each line is about 1 MB of near-matches for the newer rules: escape runs that make views,
  // operators without keys, flags without values, heads without bodies. Only completion and
  // innocence are asserted; a backtracking pattern would not return within the test's timeout.
  const MB = 1 << 20;
  const fill = (unit: string): string => unit.repeat(Math.ceil(MB / unit.length));
  const LINES: [string, boolean][] = [
    [fill('\\"'), true],
    [fill("\\\\"), true],
    [fill('a\\\\\\"b'), true],
    [fill("\\u00"), true],
    [fill("a:="), true],
    [fill("=>"), true],
    [fill("--password --"), true],
    [fill("mysql -p"), false],
    [fill("sshpass "), true],
    [fill("Q~"), true],
    [fill(":AA"), true],
    [fill("sk_live_"), true],
    [fill("_-.$"), true],
    [fill("0123456789abcdef-"), true],
    [fill("DB_PASS"), true],
    [`password=${"&a".repeat(MB / 2)}`, false],
    [`https://u:${"p".repeat(MB)}`, true],
    [fill("https://:@"), false],
    [fill("Authorization: "), true],
    [fill("-----BEGIN A "), true],
    [fill("Private-Lines: 1\n"), true],
    [fill('"password":[{'), true], // lists under a secret name, each opening an object that never closes
    [fill(`"password":["a 'password':[", `), false], // a list whose every item holds another list's key
    [fill("passwords:\n- "), true], // YAML block lists whose every item is another list's key
    [fill("secrets:\\n  - ab\\n"), true], // escaped block lists of short items
    [`${"a ".repeat(MB / 2)}password:\n- ab`, true], // a key a megabyte into its line
    [fill("API_KEYS=a,"), true], // a plural name's comma list whose items are keys again
    [fill("secret: |\n"), true], // YAML block scalars, each ended by the next one's key
    [`password: >\n${"  ab\n".repeat(MB / 5)}`, true], // one with a megabyte of short lines
    [fill("\nab:5432:c:d:"), true], // .pgpass lines with no password
    [fill(`set("password", 'a`), false], // setter calls whose values run into the next call
    [fill("jdbc:oracle:thin:a/"), true], // Oracle connect strings that never reach an "@"
    [fill("--set secrets.x=,"), true], // Helm --set lists of empty values under a store's path
    [fill("seed phrase: legal "), true], // seed-phrase names whose words run into the next name
    [fill("A_TOKEN=a''"), false], // shell words of pieces, each piece a secret name's assignment again
    [`mnemonic: ${"abc ".repeat(MB / 4)}`, true], // a megabyte of words after one
    [`password: '${"''".repeat(MB / 2)}`, false], // a single-quoted value of doubled quotes
    [fill("ssh-keygen -N "), false], // passphrase flags, each looking back for its command
    [`sudo -S ${fill("<<<a ")}`, true], // here-strings in one megabyte-long sudo command, each judged by it
    [`sudo -S x ${fill("<<EOF\n")}`, false], // here-documents whose every line opens another
    [fill("eyJabcdefghijkl\n"), true], // lines as wide as a wrapped JWT's first, none of them one
    [fill("eyJabcdefgh.\n"), true], // JWT headers broken after their dot, each opening another
    [fill(" IQoJb3JpZ2luX2Vj" + "a".repeat(90) + "_"), true], // AWS session token heads whose run ends badly
    [fill("SET PASSWORD "), true], // SQL's SET PASSWORD with no value, each reading on to the next
    [fill("USER a PASSWORD "), true], // and user names before PASSWORD, each read back
    [fill("Key  Value\n---  -----\n"), true], // vault table headers, each row another header
    [fill("a:1> AUTH "), false], // redis-cli prompts, each AUTH reading the next prompt as its password
    [fill("auth(a pwd: "), true], // MongoDB user calls whose pwd is no literal, each reading on
    [`====== Data ======\nKey  Value\n---  -----\na  ${"b ".repeat(MB / 2)}`, false], // a data row a megabyte long
    [fill("pa\u200d"), true], // a zero-width joiner every third character: a folded reading of a megabyte
    [fill("sqlplus a/b/"), true],
    [fill("\nconnect a/b c"), true],
    [fill(` ${Buffer.from('{"auths": {"a": {}}, "n": 1}').toString("base64")}`), true], // base64 of JSON documents, each decoded and read
    [`eyJ${"A".repeat(MB)}`, true], // a megabyte of base64 that starts like a JSON document
    [fill("'a'+"), true], // chains of string literals, each joined and read
    [fill("echo QUJDREVGR0hJSktM | base64 -d\n"), true], // base64 decoded by a command, each decoded and read
    [fill('"-a", '), true], // argument lists of flags, each run of items joined and read
    [fill("- -a\n"), true], // and block lists of them, a line each
    [fill("password\tx\t"), false], // tab-separated names and values, each value a name's for the next
    [fill("a\tb\tpassword\n"), true], // TSV headers, each row another header
    [fill("password\tpassword\t"), true], // a line of names a megabyte long, each judged a header's or not
  ];

  it("redacts 1 MB adversarial lines, leaving the innocent ones unchanged", () => {
    for (const [line, innocent] of LINES) {
      const out = redactText(line);
      expect(out.text.length).toBeGreaterThan(0);
      if (innocent) expect(out.changed, line.slice(0, 40)).toBe(false);
    }
  });
});
