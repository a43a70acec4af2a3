import { BEFORE, type Rule } from "./rule.ts";

/**
 * Secrets inside base64 of a JSON document or a PEM block: a Kubernetes docker-registry secret's
 * `.dockerconfigjson` (`{"auths": {…: {"auth": …, "password": …}}}`), a config file shipped as
 * base64 (`echo eyJ… | base64 -d > settings.json`), a kubeconfig's `client-key-data` or a TLS
 * secret's `tls.key` (a private key's PEM). No pattern sees through the encoding, so the text is
 * decoded and redacted as text; when that finds a secret, the whole base64 goes (a certificate's
 * PEM holds none and stays). Base64 of a JSON object starts `eyJ` (`{"`), `eyA` (`{ `), `ewo`
 * (`{\n`), `ew0` (`{\r`) or `ewk` (`{\t`), of a PEM block `LS0tLS1CRUdJTi` (`-----BEGIN`); a
 * JWT's segments, base64url and followed by `.`, are not read here (tokens.ts has them).
 */
const HEADS = "ey[JA]|ew[o0k]|LS0tLS1CRUdJTi";
/** What the decoded text must be: a JSON object's text or a PEM block, not bytes that start like one. */
const DOCUMENT = /^(?:\{[\s\S]*\}\s*|-----BEGIN [\s\S]*)$/;
/** The longest base64 decoded: a docker config or a settings file is a few kilobytes. */
const MAX_ENCODED = 64 * 1024;
/**
 * `base64` wraps its output at 76 columns and `openssl base64` at 64: the lines after a first line
 * of that width are read as one base64 with it, as long as each is that wide but the last.
 */
const WRAP_WIDTHS = new Set([64, 76]);
const WRAPPED_LINES = MAX_ENCODED / 64;
const LINE_BREAK = /\r?\n|(?:\\r)?\\n/y;

/** The length of the base64 that `match` starts with, its wrapped lines included. */
function wrappedLength(match: string): number {
  let end = /^[A-Za-z0-9+/]*={0,2}/.exec(match)![0].length;
  if (!WRAP_WIDTHS.has(end)) return end;
  const width = end;
  for (let lines = 0; lines < WRAPPED_LINES; lines++) {
    LINE_BREAK.lastIndex = end;
    if (!LINE_BREAK.test(match)) break;
    const line = /^[A-Za-z0-9+/]*={0,2}/.exec(match.slice(LINE_BREAK.lastIndex, LINE_BREAK.lastIndex + width + 3))![0];
    if (line.length === 0 || line.length > width) break;
    end = LINE_BREAK.lastIndex + line.length;
    if (line.length < width) break;
  }
  return end;
}

/**
 * Base64 a command decodes: `echo <base64> | base64 -d` (`--decode`, macOS's `-D`, after `echo -n`
 * or `printf '%s'`) and `base64 -d <<< <base64>`. The decoded text is what the command prints; when
 * the rules find a secret in it (`ghp_…`, a URL with a password, `DB_PASSWORD=…`) the base64 goes.
 * Bytes that hold no secret a rule knows (a random key's raw bytes) stay: nothing names them.
 * Groups: 1 what precedes the base64, 2 its quote, 3 the base64.
 */
const DECODE = String.raw`base64[ \t]+(?:-d|--decode|-D)\b`;
const DECODED_COMMAND = new RegExp(
  String.raw`((?:(?:echo(?:[ \t]+-[ne]{1,2})*|printf[ \t]+(?:'%s'|"%s"))[ \t]+)(?=["']?[A-Za-z0-9+/]{8,${MAX_ENCODED}}={0,2}["']?[ \t]*\|[ \t]*${DECODE})|${DECODE}[ \t]*<<<[ \t]*)(["']?)([A-Za-z0-9+/]{8,${MAX_ENCODED}}={0,2})\2(?![A-Za-z0-9+/=])`,
  "g",
);

/** `redact` is the engine's own redaction of a text: the decoded document is read by every rule. */
export function encodedRules(redact: (text: string) => string): readonly Rule[] {
  const pattern = new RegExp(
    String.raw`(?:${HEADS})(?<=${BEFORE}(?:${HEADS}))[A-Za-z0-9+/]{36,${MAX_ENCODED}}={0,2}(?:(?:\r?\n|(?:\\r)?\\n)[A-Za-z0-9+/]{1,76}={0,2}){0,${WRAPPED_LINES}}(?![A-Za-z0-9+/=_.-])`,
    "g",
  );
  return [
    {
      name: "base64-json",
      needles: ["eyJ", "eyA", "ewo", "ew0", "ewk", "LS0tLS1CRUdJTi"],
      escapeBlind: true,
      pattern,
      secret: (match) => {
        const length = wrappedLength(match[0]);
        const encoded = match[0].slice(0, length).replace(/\r?\n|(?:\\r)?\\n/g, "");
        const text = Buffer.from(encoded, "base64").toString("utf8");
        if (!DOCUMENT.test(text) || /[\u0000-\u0008\u000e-\u001f\ufffd]/.test(text)) return null;
        // The rules' patterns are shared: redacting the document runs this one from the start
        // again, so where the outer scan stands is put back after.
        const resume = pattern.lastIndex;
        try {
          return redact(text) !== text ? [0, length] : null;
        } finally {
          pattern.lastIndex = resume;
        }
      },
    },
    {
      name: "base64-decoded-by-command",
      needles: ["base64"],
      pattern: DECODED_COMMAND,
      secret: (match) => {
        const [, head = "", quote = "", encoded = ""] = match;
        const text = Buffer.from(encoded, "base64").toString("utf8");
        if (/[\u0000-\u0008\u000e-\u001f\ufffd]/.test(text)) return null;
        const resume = DECODED_COMMAND.lastIndex;
        try {
          const start = head.length + quote.length;
          return redact(text) !== text ? [start, start + encoded.length] : null;
        } finally {
          DECODED_COMMAND.lastIndex = resume;
        }
      },
    },
  ];
}
