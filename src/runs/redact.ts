/**
 * Best-effort secret redaction: the one place that decides what looks like a secret. It is applied
 * at the source, before text is measured, sliced or written, so page budgets hold and a secret
 * split across a page boundary is still caught. It is pattern matching, not a guarantee: arbitrary
 * sensitive prose gets through. The corpus in test/runs/redact.test.ts pins both directions:
 * secrets that must go and innocent look-alikes that must survive.
 */

export const REDACTED = "[REDACTED]";

interface Rule {
  name: string;
  pattern: RegExp;
  /** Replacement; `$n` groups keep the non-secret context (a header name, a URL's user). */
  replace: string | ((match: string, ...groups: string[]) => string);
}

// A token body must not be glued to a longer word on either side.
const B = "(?<![A-Za-z0-9_-])";
const E = "(?![A-Za-z0-9_-])";

/**
 * `sk-` is also an ordinary word prefix (`sk-learn-compatible-estimator-wrapper`). Real OpenAI and
 * Anthropic keys are long random base62/base64url: a digit, or both cases, is all but certain.
 */
const randomKey = (match: string): string =>
  /\d/.test(match) || (/[A-Z]/.test(match) && /[a-z]/.test(match)) ? REDACTED : match;

/** Provider tokens with a recognisable prefix. Lengths are the providers' documented minimums. */
const TOKEN_RULES: Rule[] = [
  { name: "anthropic", pattern: new RegExp(`${B}sk-ant-[A-Za-z0-9_-]{20,}${E}`, "g"), replace: randomKey },
  { name: "openai", pattern: new RegExp(`${B}sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}${E}`, "g"), replace: randomKey },
  {
    name: "github",
    pattern: new RegExp(`${B}(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})${E}`, "g"),
    replace: REDACTED,
  },
  { name: "gitlab", pattern: new RegExp(`${B}glpat-[A-Za-z0-9_-]{20,}${E}`, "g"), replace: REDACTED },
  { name: "aws-key-id", pattern: /(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Z0-9])/g, replace: REDACTED },
  { name: "google", pattern: new RegExp(`${B}AIza[0-9A-Za-z_-]{35}${E}`, "g"), replace: REDACTED },
  { name: "slack", pattern: new RegExp(`${B}xox[abposre]-[A-Za-z0-9-]{10,}${E}`, "g"), replace: REDACTED },
  { name: "stripe", pattern: new RegExp(`${B}(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}${E}`, "g"), replace: REDACTED },
  { name: "npm", pattern: new RegExp(`${B}npm_[A-Za-z0-9]{36}${E}`, "g"), replace: REDACTED },
  { name: "huggingface", pattern: new RegExp(`${B}hf_[A-Za-z0-9]{30,}${E}`, "g"), replace: REDACTED },
  { name: "groq", pattern: new RegExp(`${B}gsk_[A-Za-z0-9]{40,}${E}`, "g"), replace: REDACTED },
  { name: "xai", pattern: new RegExp(`${B}xai-[A-Za-z0-9]{40,}${E}`, "g"), replace: REDACTED },
  {
    name: "jwt",
    pattern: new RegExp(`${B}eyJ[A-Za-z0-9_-]{8,}\\.eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}${E}`, "g"),
    replace: REDACTED,
  },
];

/** A bearer credential is long and has a digit: "Bearer of bad news" and "Bearer token" survive. */
const BEARER: Rule = {
  name: "bearer",
  pattern: /\b(Bearer\s+)([A-Za-z0-9._~+/-]{16,}=*)/gi,
  replace: (match, prefix = "", token = "") => (/\d/.test(token) ? `${prefix}${REDACTED}` : match),
};

const BASIC: Rule = {
  name: "basic-auth",
  pattern: /\b(Authorization\s*:\s*Basic\s+)([A-Za-z0-9+/]{8,}=*)/gi,
  replace: `$1${REDACTED}`,
};

/** A whole PEM private key block; an unterminated one is redacted to the end of the text. */
const PRIVATE_KEY: Rule = {
  name: "private-key",
  pattern: /-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY( BLOCK)?-----[\s\S]*?(?:-----END \1PRIVATE KEY\2-----|$(?![\s\S]))/g,
  replace: REDACTED,
};

/**
 * `scheme://user:password@host`: the password goes, the user and host stay readable. People paste
 * unencoded passwords, so the password may hold `/` and `@`: it runs to the first `@` that is
 * followed by a host (host characters, then no further `@`). `?` and `#` end it, as in any URL
 * parser, and a "password" that is a port and path (`host:8080/a@b`) is left alone. Every part is
 * bounded so a long line cannot make the scan quadratic.
 */
const URL_CREDENTIALS: Rule = {
  name: "url-credentials",
  pattern:
    /(?<![A-Za-z0-9+.-])([a-z][a-z0-9+.-]{0,31}:\/\/[^\s/:@]{1,128}:)([^\s?#]{1,256}?)(@)(?=[A-Za-z0-9._~%[\]-]+(?![A-Za-z0-9._~%[\]@-]))/gi,
  replace: (match, head = "", secret = "", at = "") =>
    secret === REDACTED || /^\d{1,5}(?:\/|$)/.test(secret) ? match : `${head}${REDACTED}${at}`,
};

/**
 * Assignments to a secret-named key: `PASSWORD=hunter2`, `"apiKey": "…"`, `token: abc123…`,
 * `--password=…`. The key must end at the keyword (so `max_tokens`, `tokenizer` and `passwordless`
 * survive), and code-shaped values survive: type names, calls, member expressions, templates.
 */
const SECRET_KEY = String.raw`(?<![A-Za-z0-9_.-])([A-Za-z0-9_.-]*?(?:password|passwd|passphrase|secret|token|api[_-]?key|apikey|access[_-]?key|secret[_-]?key|private[_-]?key|client[_-]?secret))`;
const ASSIGNMENT: Rule = {
  name: "assignment",
  // `=` but not `==`, `===` or `=>`: comparisons and arrows are code, not assignments.
  pattern: new RegExp(
    String.raw`${SECRET_KEY}(["']?)(\s*)(:|=(?![=>]))(\s*)("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|[^\s"',;)}\]]+)`,
    "gi",
  ),
  replace: (match, key = "", quote = "", pre = "", op = "", post = "", value = "") => {
    const redacted = redactAssignedValue(value, op, pre, post);
    return redacted === null ? match : `${key}${quote}${pre}${op}${post}${redacted}`;
  },
};

const CODE_WORDS = new Set([
  "string",
  "number",
  "boolean",
  "bigint",
  "any",
  "unknown",
  "never",
  "object",
  "null",
  "undefined",
  "true",
  "false",
  "none",
  "str",
  "int",
  "bool",
  "bytes",
  "required",
  "optional",
  "secret",
  "password",
  "token",
  "redacted",
  "hidden",
  "env",
  "yes",
  "no",
  "void",
  "function",
]);

/** Returns the replacement for a secret-looking value, or null when the value should survive. */
function redactAssignedValue(value: string, op: string, pre: string, post: string): string | null {
  const quoted = value.startsWith('"') || value.startsWith("'");
  const inner = quoted ? value.slice(1, -1) : value;
  if (inner.length < 3 || inner.startsWith(REDACTED.slice(0, -1))) return null; // too short, or already redacted
  if (/^\*+$|^x+$|^\.+$|^<|^\$\{.*\}$|^\{\{.*\}\}$|^%\(?\w+\)?s?$/i.test(inner)) return null; // placeholders
  if (CODE_WORDS.has(inner.toLowerCase())) return null;
  if (quoted) return `${value[0]}${REDACTED}${value[0]}`;
  if (/^\$|[([]|^\d{1,5}$/.test(inner)) return null; // shell expansion, a call or index, a small number
  if (/^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$/.test(inner)) return null; // member expression
  // `KEY=value` with no spaces is env, flag or URL-query syntax: whatever follows is the value.
  if (op === "=" && pre === "" && post === "") return REDACTED;
  // Spaced `=` (INI, ~/.aws/credentials, code) and `:` (YAML, prose). Identifiers and words
  // (`other_variable`, `await`, `enabled`, `refresh`, `MAX_RETRIES`) survive; a credential has a
  // digit or punctuation. The cost: an all-letter password written this way gets through.
  if (/^[A-Za-z_-]+$/.test(inner) || /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$/.test(inner)) return null;
  return REDACTED;
}

const RULES: Rule[] = [PRIVATE_KEY, ...TOKEN_RULES, BEARER, BASIC, URL_CREDENTIALS, ASSIGNMENT];

export function redactText(text: string): { text: string; changed: boolean } {
  let out = text;
  for (const rule of RULES) {
    rule.pattern.lastIndex = 0;
    if (!rule.pattern.test(out)) continue;
    rule.pattern.lastIndex = 0;
    out =
      typeof rule.replace === "string"
        ? out.replace(rule.pattern, rule.replace)
        : out.replace(rule.pattern, rule.replace as (match: string, ...rest: unknown[]) => string);
  }
  return { text: out, changed: out !== text };
}

const SECRET_KEY_NAME = new RegExp(`^${SECRET_KEY.replace("(?<![A-Za-z0-9_.-])", "")}$`, "i");

/**
 * Deep-redact a JSON-like value: every string is redacted as text, and a string stored under a
 * secret-named key (`{ "password": "hunter2" }`) is replaced whole, since no pattern in the string
 * alone can tell. Returns a fresh JSON-safe copy (the canonical form: what JSON.stringify keeps).
 */
export function redactValue(value: unknown): { value: unknown; changed: boolean } {
  const state = { changed: false };
  const json = JSON.stringify(value);
  if (json === undefined) return { value: undefined, changed: false };
  const walked = walk(JSON.parse(json) as unknown, state);
  return { value: walked, changed: state.changed };
}

function walk(value: unknown, state: { changed: boolean }): unknown {
  if (typeof value === "string") {
    const r = redactText(value);
    if (r.changed) state.changed = true;
    return r.text;
  }
  if (Array.isArray(value)) return value.map((item) => walk(item, state));
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      let next: unknown;
      if (
        typeof item === "string" &&
        SECRET_KEY_NAME.test(key) &&
        redactAssignedValue(JSON.stringify(item), ":", "", "") !== null
      ) {
        next = REDACTED;
        state.changed = true;
      } else {
        next = walk(item, state);
      }
      // defineProperty, not assignment: a "__proto__" key from JSON must stay data, not a prototype.
      Object.defineProperty(out, key, { value: next, enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return value;
}
