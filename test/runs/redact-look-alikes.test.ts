import { describe, expect, it } from "vitest";
import { REDACTED, redactedJson, redactText, redactValue } from "../../src/runs/index.ts";
import { foldedViews } from "../../src/runs/redact/confusables.ts";

// Built from code points so the source itself shows what each name hides.
const CYRILLIC_A = "\u0430";
const CYRILLIC_DZE = "\u0455"; // looks like `s`
const GREEK_OMICRON = "\u03bf";
const ZWJ = "\u200d";
const ZWNJ = "\u200c";
const fullwidth = (ascii: string) => Array.from(ascii, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0)).join("");
const bold = (ascii: string) => Array.from(ascii, (c) => String.fromCodePoint(0x1d41a + c.charCodeAt(0) - 97)).join("");

const NAMES = [
  `p${CYRILLIC_A}ssword`,
  fullwidth("password"),
  `pass${ZWJ}word`,
  `DB_P${ZWNJ}ASSWORD`,
  `api_t${GREEK_OMICRON}ken`,
  `client_${CYRILLIC_DZE}ecret`,
  bold("password"),
];

describe("a secret under a key name spelt with look-alike letters", () => {
  it("is redacted in text, as YAML, env and JSON, escaped or not", () => {
    for (const name of NAMES) {
      for (const text of [
        `${name}: hunter2-Tr0ub4dor`,
        `${name}=hunter2-Tr0ub4dor\nNEXT=1`,
        JSON.stringify({ [name]: "hunter2-Tr0ub4dor" }),
        JSON.stringify({ args: JSON.stringify({ [name]: "hunter2-Tr0ub4dor" }) }),
        // JSON writers that escape every non-ASCII unit: the name arrives as `p\u0430ssword`.
        JSON.stringify({ [name]: "hunter2-Tr0ub4dor" }).replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`),
      ]) {
        const out = redactText(text).text;
        expect(out, JSON.stringify(text)).not.toContain("Tr0ub4dor");
        expect(out).toContain(REDACTED);
      }
    }
    // The name is written back as it was: only the value goes.
    expect(redactText(`p${CYRILLIC_A}ssword: hunter2-Tr0ub4dor\nport: 5432`).text).toBe(`p${CYRILLIC_A}ssword: ${REDACTED}\nport: 5432`);
  });

  it("is redacted in a value, a word password included, as it would be under the ASCII name", () => {
    for (const name of NAMES) {
      const value = { [name]: "q9Zt4Lw8Nc2Vb6Xm7Rk1", port: 5432 };
      for (const written of [redactValue(value).value, JSON.parse(redactedJson(value)!)]) {
        expect(written, name).toEqual({ [name]: REDACTED, port: 5432 });
      }
    }
    // A word is a password under a look-alike of `password`, as under `password` itself; a number too.
    expect(redactValue({ [fullwidth("password")]: "sunshine" }).value).toEqual({ [fullwidth("password")]: REDACTED });
    expect(redactValue({ [`p${CYRILLIC_A}ssword`]: 83749212 }).value).toEqual({ [`p${CYRILLIC_A}ssword`]: REDACTED });
    // A store's name in look-alikes is a store: `sеcrets` with a Cyrillic `е`.
    expect(redactValue({ ["s\u0435crets"]: { db: "p4ssw0rd-Very!" } }).value).toEqual({ ["s\u0435crets"]: { db: REDACTED } });
  });

  it("leaves prose in Cyrillic, Greek and fullwidth, and emoji joined by ZWJ, as they are", () => {
    for (const text of [
      "Пароль: секрет, и токен: нет. Ответ: да",
      "Κωδικός: απαιτείται, τοκεν: όχι",
      `${fullwidth("password")} ${fullwidth("field")} ${fullwidth("is")} ${fullwidth("required")}`,
      `family: 👨${ZWJ}👩${ZWJ}👧, token_count: 12`,
      `Mixed-script product name: Vk${CYRILLIC_A}ntakte: 2024 release`,
    ]) {
      expect(redactText(text), text).toEqual({ text, changed: false });
    }
  });
});

describe("a token whose value holds a look-alike", () => {
  it("is redacted when fullwidth punctuation stands in its head (ghp＿…), as a Cyrillic letter or a zero-width space inside it is", () => {
    const body = "aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789";
    for (const token of [`ghp\uff3f${body}`, `ghp_${body.slice(0, 6)}\u200b${body.slice(6)}`, `ghp_\u0430${body.slice(1)}`]) {
      expect(redactText(`pushed with ${token} today`).text, token).toBe(`pushed with ${REDACTED} today`);
    }
    // CJK text with fullwidth punctuation beside Latin words stays.
    const cjk = "使用Python（版本3）：完成。Token数：12";
    expect(redactText(cjk)).toEqual({ text: cjk, changed: false });
  });
});

describe("a long text with one look-alike letter", () => {
  it("is read folded only around it: 1 MiB with one Cyrillic letter folds about a kilobyte, and the secret beside it still goes", () => {
    const filler = "INFO worker 7 finished batch 1234 in 18 ms; queue depth 3, next poll in 250 ms.\n";
    const half = filler.repeat(Math.ceil((512 * 1024) / filler.length));
    const text = `${half}database:\n  p${CYRILLIC_A}ssword: hunter2-Tr0ub4dor\n  host: db\n${half}`;
    const views = foldedViews(text);
    expect(views.reduce((sum, view) => sum + view.text.length, 0)).toBeLessThan(2048);
    expect(redactText(text).text).toBe(`${half}database:\n  p${CYRILLIC_A}ssword: ${REDACTED}\n  host: db\n${half}`);
  });

  it("still reads a YAML block under a look-alike store name, and look-alikes at the text's two ends", () => {
    const filler = "x".repeat(300) + "\n";
    const block = `s\u0435crets:\n  db: hunter2-Tr0ub4dor\n  api: Zq8v-Lm3k-Pp0w\n`;
    expect(redactText(`${filler}${block}${filler}`).text).toBe(`${filler}s\u0435crets:\n  db: ${REDACTED}\n  api: ${REDACTED}\n${filler}`);
    expect(redactText(`p${CYRILLIC_A}ssword=hunter2-Tr0ub4dor ${filler.repeat(20)}`).text).toBe(`p${CYRILLIC_A}ssword=${REDACTED} ${filler.repeat(20)}`);
    expect(redactText(`${filler.repeat(20)}api_t${GREEK_OMICRON}ken: hunter2-Tr0ub4dor`).text).toBe(`${filler.repeat(20)}api_t${GREEK_OMICRON}ken: ${REDACTED}`);
  });
});
