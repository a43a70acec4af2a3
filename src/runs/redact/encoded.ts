import { BEFORE, whole, type Rule } from "./rule.ts";

/**
 * Secrets inside base64 of a JSON document: a Kubernetes docker-registry secret's
 * `.dockerconfigjson` (`{"auths": {…: {"auth": …, "password": …}}}`), a config file shipped as
 * base64 (`echo eyJ… | base64 -d > settings.json`). No pattern sees through the encoding, so the
 * document is decoded and redacted as text; when that finds a secret, the whole base64 goes.
 * Base64 of a JSON object starts `eyJ` (`{"`), `eyA` (`{ `), `ewo` (`{\n`), `ew0` (`{\r`) or `ewk`
 * (`{\t`); a JWT's segments, base64url and followed by `.`, are not read here (tokens.ts has them).
 */
const HEADS = "ey[JA]|ew[o0k]";
/** The longest base64 decoded: a docker config or a settings file is a few kilobytes. */
const MAX_ENCODED = 64 * 1024;

/** `redact` is the engine's own redaction of a text: the decoded document is read by every rule. */
export function encodedRules(redact: (text: string) => string): readonly Rule[] {
  const pattern = new RegExp(String.raw`(?:${HEADS})(?<=${BEFORE}(?:${HEADS}))[A-Za-z0-9+/]{36,${MAX_ENCODED}}={0,2}(?![A-Za-z0-9+/=_.-])`, "g");
  return [
    {
      name: "base64-json",
      escapeBlind: true,
      pattern,
      secret: whole((encoded) => {
        const text = Buffer.from(encoded, "base64").toString("utf8");
        // A JSON object's text, not bytes that happen to start like one.
        if (!/^\{[\s\S]*\}\s*$/.test(text) || /[\u0000-\u0008\u000e-\u001f\ufffd]/.test(text)) return false;
        // The rules' patterns are shared: redacting the document runs this one from the start
        // again, so where the outer scan stands is put back after.
        const resume = pattern.lastIndex;
        try {
          return redact(text) !== text;
        } finally {
          pattern.lastIndex = resume;
        }
      }),
    },
  ];
}
