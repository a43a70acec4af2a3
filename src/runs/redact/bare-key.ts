import { classChanges, looksRandom, type Rule } from "./rule.ts";

/**
 * A value under a bare `key` (`key: <value>` in YAML, `key = …` in INI, `KEY=…`, `"key": "…"`): a
 * Stripe or Maps key in a config a user pastes. `key` alone names a lookup's key far more often
 * (`key: node-role.kubernetes.io/control-plane`, a cache's `key: npm-${{ … }}`, `key: user_id`), so
 * the value must look generated, as the URL query rule asks of `?key=` (auth.ts): 16 to 512
 * characters of a token's alphabet with a letter, and a digit or both cases, changing character class at least
 * once every four characters, mostly not words (an identifier such as `MyServiceName2Factory` or
 * `SERVICE_NAME_V2` is), and no path. Only where a key opens its line, or a JSON object's field.
 * Groups: 1 the key and its operator, 2 the quote, 3 the value.
 */
export const BARE_KEY: Rule = {
  name: "bare-key",
  // Every match holds `key` then its operator, after a quote or spaces at most (`"key": …` in JSON).
  needles: ["key:", "key=", "key :", "key =", 'key":', 'key" :', "key':", "key\t"],
  pattern: /(key(?<=(?:^|[\n{,]|\\n)[ \t]*(?:-[ \t]+)?["']?key)["']?[ \t]*[:=][ \t]*)(["']?)([A-Za-z0-9+/_-]{16,512}={0,2})\2(?=[ \t]*(?:$|[\r\n,}#]|\\[nr"]))/gi,
  secret: (m) => {
    const [, head = "", quote = "", value = ""] = m;
    if (!looksRandom(value) || !/[A-Za-z]/.test(value) || classChanges(value) * 4 < value.length || value.includes("/") || wordy(value)) return null;
    const start = head.length + quote.length;
    return [start, start + value.length];
  },
};

/**
 * Half or more of it is words of three letters or more, as an identifier's camel, snake or upper
 * case is (`SERVICE_NAME_V2`'s words have four letters or more). A word has a vowel and no four
 * consonants in a row: random text's letter runs are short
 * and rarely pronounceable, and counting every run of three lower-case letters as a word kept one
 * generated 16-character key in ten.
 */
function wordy(value: string): boolean {
  let inWords = 0;
  for (const word of value.match(/[A-Z]?[a-z]{3,}|[A-Z]{4,}(?![a-z])/g) ?? []) if (/[aeiou]/i.test(word) && !/[^aeiou]{4}/i.test(word)) inWords += word.length;
  return inWords * 2 >= value.length;
}
