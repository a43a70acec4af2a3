import type { Rule } from "./rule.ts";

/**
 * Wallet seed phrases (BIP-39 mnemonics: 12, 15, 18, 21 or 24 lower-case words of 3 to 8 letters),
 * but only under a name that says so: `MNEMONIC="…"` (Hardhat's and Truffle's .env), `"mnemonic":
 * "…"`, `seed phrase: …`, `recoveryPhrase = '…'`, `secret words: …`. Whoever holds the words holds
 * the wallet. Unlabelled word lists are prose and stay, and so does a labelled value that is not
 * exactly such a list (`mnemonic: mov`, `seed phrase: never share it with anyone`).
 */

/** The names: mnemonic (phrase, words), seed/recovery/backup/secret/pass phrase or words, wallet seed; with a prefix too (`DEPLOYER_MNEMONIC`). */
const NAME = String.raw`[A-Za-z0-9_]{0,64}?(?:mnemonic(?:[ _-]?(?:phrase|words))?|(?:seed|recovery|backup|secret|pass)[ _-]?(?:phrase|words)|wallet[ _-]?seed)`;
/** A mnemonic object's phrase field, as ethers keeps it: `"mnemonic": {"phrase": …}`, console.log's `mnemonic: Mnemonic { phrase: '…'`. */
const SPACE = String.raw`(?:\s|\\[nrt])`; // a line break escaped inside a JSON string too
const MNEMONIC_FIELD = String.raw`mnemonic["']?${SPACE}{0,16}(?:[:=]${SPACE}{0,16})?(?:Mnemonic${SPACE}{0,16})?\{${SPACE}{0,64}["']?phrase`;
const LABEL = String.raw`(?:${NAME}|${MNEMONIC_FIELD})`;
const WORD_COUNTS = new Set([12, 15, 18, 21, 24]);
/**
 * Common English words of three letters or more that the BIP-39 English list does not hold
 * (checked against it): a labelled run holding one is prose (`seed phrase: never share these words
 * with anyone…`), not a mnemonic.
 */
const PROSE_WORDS = new Set(
  "the and with these those your are was were been from them their which would could should onto than not but its our has had for who why how does did her his him she get got out here some each may might being both most".split(" "),
);

/**
 * The pattern starts at the last word of the name and reads the rest back with a lookbehind.
 * Groups: 1 that word, 2 the name's closing quote, 3 the operator up to the words, 4 the value's
 * opening quote, 5 the words.
 */
const SEED_PHRASE: Rule = {
  name: "seed-phrase",
  needles: ["mnemonic", "phrase", "words", "seed"],
  pattern: new RegExp(
    String.raw`(mnemonic|phrase|words|seed)(?<=(?:^|[^A-Za-z0-9_]|\\[nrt])${LABEL})(["']?)([ \t]*(?::=|=>|[:=])[ \t]*(?:(?:\r?\n|(?:\\r)?\\n)[ \t]*)?(["'\x60]?))([a-z]{3,8}(?:[ \t]{1,4}[a-z]{3,8}){11,23})(?![A-Za-z])`,
    "gi",
  ),
  secret: (m, quoting) => {
    const [whole, last = "", quote = "", head = "", open = "", words = ""] = m;
    if (!isSeedPhrase(words)) return null;
    const start = last.length + quote.length + head.length;
    const end = start + words.length;
    const after = m.input[m.index + whole.length];
    if (open !== "") return after === open && quoting.sameQuoting(m.index + start - 1, m.index + end) ? [start, end] : null;
    // Unquoted, the words are the whole value: the line, the field, the string holding the text
    // (a JSON string's closing quote, escaped or not) or the sentence ends after them.
    const rest = m.input.slice(m.index + whole.length, m.index + whole.length + 3);
    return /^(?:[ \t]*(?:[\r\n,;}#"'\x60]|$)|\\[nr"']|\.(?:\s|\\[nr"]|["']|$))/.test(rest) ? [start, end] : null;
  },
};

/** One item of a numbered list of words: `1. legal`, `2) winner`, `3: thank`, `4 year`. */
const NUMBERED_ITEM = /(\d{1,2})[.):]?[ \t]{0,4}([a-z]{3,8})/g;

/**
 * A seed phrase written as a numbered list under its name, as wallets show it and people copy it:
 * `seed phrase:\n1. legal\n2. winner…`, or on one line (`1.legal 2.winner …`). The numbers must run
 * 1, 2, 3… to 12, 15, 18, 21 or 24 and the words be a seed phrase's; the numbers stay readable
 * only as part of the one `[REDACTED]`. Groups: 1 the name's last word, 2 its closing quote, 3 the
 * operator, 4 the list.
 */
const NUMBERED_SEED_PHRASE: Rule = {
  name: "numbered-seed-phrase",
  needles: ["mnemonic", "phrase", "words", "seed"],
  pattern: new RegExp(
    String.raw`(mnemonic|phrase|words|seed)(?<=(?:^|[^A-Za-z0-9_]|\\[nrt])${LABEL})(["']?)([ \t]*(?::=|=>|[:=])?)((?:(?:\s|\\[nrt]|,){1,8}\d{1,2}[.):]?[ \t]{0,4}[a-z]{3,8}){12,24})(?![A-Za-z])`,
    "gi",
  ),
  secret: (m) => {
    const [, last = "", quote = "", head = "", list = ""] = m;
    const words: string[] = [];
    for (const [, number = "", word = ""] of list.matchAll(NUMBERED_ITEM)) {
      if (Number(number) !== words.length + 1) return null;
      words.push(word);
    }
    if (!isSeedPhrase(words.join(" "))) return null;
    const start = last.length + quote.length + head.length + list.search(/\d/);
    return [start, last.length + quote.length + head.length + list.length];
  },
};

export const PHRASE_RULES: readonly Rule[] = [SEED_PHRASE, NUMBERED_SEED_PHRASE];

/** A whole key name that labels a seed phrase (`mnemonic`, `seedPhrase`, `RECOVERY_PHRASE`), for structured values. */
export const SEED_PHRASE_NAME = new RegExp(`^${NAME}$`, "i");

/** Whether `words` is a seed phrase's shape: 12 to 24 (by threes) lower-case words of 3 to 8 letters, none a prose word. */
export function isSeedPhrase(words: string): boolean {
  const list = words.trim().split(/[ \t]+/);
  return WORD_COUNTS.has(list.length) && list.every((word) => /^[a-z]{3,8}$/.test(word) && !PROSE_WORDS.has(word));
}
