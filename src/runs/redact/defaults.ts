import { isSecretKeyName, judgeValue, KEY_WORDS, keyAllowed } from "./key-names.ts";
import type { Rule } from "./rule.ts";

/**
 * A secret written as the default of the variable that should hold it: Spring's
 * `${DB_PASSWORD:…}`, the shell's and Compose's `${POSTGRES_PASSWORD:-…}` (`-`, `:=`, `=` too), and
 * code's fallback for an unset env var (`process.env.DB_PASSWORD ?? "…"`, `|| '…'`, Python's
 * `or "…"`). The placeholder itself is no secret (keys.ts lets `${…}` through), but its default is
 * the password in use wherever the variable is unset. It is judged as a value under the variable's
 * name, or under the key the placeholder is assigned to (`password: ${DB_PW:…}`); `${NAME:?message}`
 * is an error message, and a default that is another variable (`${A:${B}}`) is none.
 */

/** Groups: 1 everything before the default, 2 the variable's name, 3 the default. */
const VARIABLE_DEFAULT: Rule = {
  name: "variable-default",
  needles: ["${"],
  pattern: /(\$\{([A-Za-z_][A-Za-z0-9_.]{0,128})(?::-|:=|-|=|:)(?![?$]))([^\s}"'\\$]{1,512})\}/g,
  secret: (m) => {
    const [, head = "", name = "", value = ""] = m;
    const key = isSecretKeyName(name) ? name : keyBefore(m.input, m.index);
    if (key === undefined || !judgeValue({ key, op: "=", spaced: false, value, endsLine: false })) return null;
    return [head.length, head.length + value.length];
  },
};

/** The secret name a placeholder at `at` is assigned to on its line (`password: ${…}`, `DB_PASS="${…}"`), if any. */
const KEY_BEFORE = new RegExp(String.raw`(?:^|[^A-Za-z0-9_.-])([A-Za-z0-9_.-]{0,128}?(?:${KEY_WORDS}))["']?[ \t]*[:=][ \t]*["']?$`, "i");

function keyBefore(input: string, at: number): string | undefined {
  const line = input.slice(Math.max(0, at - 160), at);
  const key = KEY_BEFORE.exec(line.slice(line.lastIndexOf("\n") + 1))?.[1];
  return key !== undefined && keyAllowed(key, "") ? key : undefined;
}

/**
 * An env var read with a literal fallback: `process.env.DB_PASSWORD ?? "…"`, `import.meta.env.X ||
 * '…'`, `os.environ.get("API_TOKEN") or "…"`, `ENV["DB_PASSWORD"] || "…"`. Groups: 1 everything before the
 * literal, 2 the variable's name, 3 the literal.
 */
const ENV_FALLBACK: Rule = {
  name: "env-fallback",
  needles: ["env.", "env[", "env(", "environ"],
  pattern: /((?:env|ENV|environ)(?:\.get)?(?:\.|\[|\()[ \t]*["']?([A-Za-z_][A-Za-z0-9_]{0,128})["']?[ \t]*[\])]?[ \t]*(?:\|\||\?\?|\bor\b)[ \t]*)("(?:[^"\\\n]|\\.){1,512}"|'(?:[^'\\\n]|\\.){1,512}')/g,
  secret: (m) => {
    const [, head = "", name = "", literal = ""] = m;
    if (!isSecretKeyName(name) || !judgeValue({ key: name, op: "=", spaced: true, value: literal, endsLine: false })) return null;
    return [head.length + 1, head.length + literal.length - 1];
  },
};

export const DEFAULT_RULES: readonly Rule[] = [VARIABLE_DEFAULT, ENV_FALLBACK];
