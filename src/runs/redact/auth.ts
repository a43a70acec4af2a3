import { isPlaceholder } from "./key-names.ts";
import { isBasicCredential } from "./keys.ts";
import { SESSION_COOKIE } from "./cookies.ts";
import { classChanges, type Finding, group, looksRandom, REDACTED, type Rule } from "./rule.ts";

/**
 * Credentials known by where they sit: HTTP authorization headers, passwords in URLs, webhook
 * URLs whose path is the secret, signed-URL signatures, private key blocks. Non-secret context
 * (the header name, the URL's scheme, user and host) stays readable.
 */

/** `Authorization: Bearer …`, `Token …`, `Bot …`, `SSWS …`: with the header named, any long value is a credential. */
const AUTHORIZATION: Rule = {
  name: "authorization-header",
  needles: ["authorization"],
  pattern:
    /((?:proxy-)?authorization["']?\s*[:=]\s*["']?(?:(?:bearer|token|bot|ssws|api-?key|key|oauth|splunk|geniekey)\s+)?)([A-Za-z0-9._~+/=:-]{8,4096})/gi,
  secret: group(2, (m) => {
    const value = m[2] ?? "";
    if (value.startsWith(REDACTED)) return false;
    // No scheme named: a bare header value must look random (not `Authorization: required`).
    return m[1]!.match(/(?:bearer|token|bot|ssws|key|oauth|splunk|geniekey)\s+$/i) !== null || (value.length >= 16 && looksRandom(value));
  }),
};

/**
 * HTTP Digest credentials (`Authorization: Digest username="u", realm=…, nonce=…, response="<hash>"`,
 * as curl -v or a proxy's log shows them): the response is a hash of the password that, with the
 * server's nonce, can be replayed or attacked offline, and the client's nonce goes with it. The
 * pattern takes the scheme and the rest of its line (to a line break, real or escaped), and the
 * fields are read in it, so each character is read once; the user, realm, nonce and URI stay.
 */
const DIGEST: Rule = {
  name: "digest-authorization",
  needles: ["digest"],
  pattern: /(digest(?<=(?:^|[^A-Za-z0-9_-])digest)[ \t]+)((?:[^\n\\]|\\[^nr]){1,4096})/gi,
  findings: (m) => {
    const [, scheme = "", fields = ""] = m;
    const found: Finding[] = [];
    for (const field of fields.matchAll(/(?:^|[\s,])(response|cnonce)[ \t]*=[ \t]*(?:\\?["'])?([A-Za-z0-9+/=._~-]{8,1024})/gi)) {
      const [whole, name = "", value = ""] = field;
      // The response is a hash (MD5's 32 hex digits, SHA-256's 64); a client nonce is random. Prose about a digest stays.
      const secret = /^response$/i.test(name) ? DIGEST_HASH.test(value) : looksRandom(value);
      const start = scheme.length + field.index + whole.length - value.length;
      if (secret) found.push({ start, end: start + value.length });
    }
    return found;
  },
};
const DIGEST_HASH = /^(?:[0-9a-f]{32}|[0-9a-f]{64}|[0-9a-f]{128})$/i;

/** A bearer credential is long and random: "Bearer of bad news" and "Bearer token" survive. */
const BEARER: Rule = {
  name: "bearer",
  needles: ["bearer"],
  escapeBlind: true,
  // The literal first, its boundary looked back at (see `prefixed`): a pattern that opens with a
  // lookbehind is tried at every position.
  pattern: /(Bearer(?<=(?:^|[^A-Za-z0-9_]|\\[nrt])Bearer)\s+)([A-Za-z0-9._~+/-]{16,4096}=*)/gi,
  secret: group(2, (m) => looksRandom(m[2] ?? "")),
};

/** `Basic <base64>` in a header or a git `extraheader`: redacted when it decodes to `user:password`. */
const BASIC: Rule = {
  name: "basic-auth",
  needles: ["basic"],
  escapeBlind: true,
  pattern: /(Basic(?<=(?:^|[^A-Za-z0-9_]|\\[nrt])Basic)\s+)([A-Za-z0-9+/]{8,4096}={0,2})(?![A-Za-z0-9+/=])/gi,
  secret: group(2, (m) => isBasicCredential(m[2] ?? "")),
};

/** The password part of a URL: `\\[^…]` lets it hold an escaped character; `\"` ends it. */
const URL_PASSWORD = String.raw`(?:[^\s"'\\]|\\[^\s"'\\])`;

/**
 * `scheme://user:password@host` and `redis://:password@host`: the password goes, the user and host
 * stay. People paste unencoded passwords, so the password may hold `/` and `@`: it runs to the
 * first `@` that is followed by a host (host characters, then no further `@`). It may hold `#`
 * and `?` too (pasted passwords are rarely percent-encoded); a "password" that is a port and a
 * path or query (`host:8080/a@b`, `host:443?to=a@b`) is left alone. Every part is bounded so a long line cannot make the scan quadratic.
 */
const URL_CREDENTIALS: Rule = {
  name: "url-credentials",
  needles: ["://"],
  // Starts at `://` (fast to find) and reads the scheme back with a lookbehind.
  pattern: new RegExp(
    String.raw`:\/\/(?<=(?<![A-Za-z0-9+.-])[a-z][a-z0-9+.-]{0,31}:\/\/)([^\s/:@"'\\]{0,128}:)(${URL_PASSWORD}{1,256}?)@(?=[A-Za-z0-9._~%[\]-]+(?![A-Za-z0-9._~%[\]@-]))`,
    "gi",
  ),
  secret: (m) => {
    const secret = m[2] ?? "";
    if (secret === REDACTED || /^\d{1,5}(?:[/?#]|$)/.test(secret) || isPlaceholder(secret)) return null;
    const start = 3 + (m[1] ?? "").length;
    return [start, start + secret.length];
  },
};

/** A DSN whose user part is the key (Sentry): `https://<32 hex>@o1.ingest.sentry.io/1`. */
const DSN_KEY: Rule = {
  name: "dsn-key",
  needles: ["://"],
  escapeBlind: true,
  pattern: /(https?:\/\/)([0-9a-f]{32})(?=(?::[0-9a-f]{32})?@)/g,
  secret: group(2),
};

/**
 * Cookie values in `Cookie:` and `Set-Cookie:` headers: a session cookie is a bearer credential.
 * The pattern starts at each `=` after a cookie name (fast to find) and the header is looked for
 * back on the same line. Other cookies (`theme=dark`) survive unless long and random.
 */
const COOKIE: Rule = {
  name: "cookie",
  // Every finding has the header on its line (see secret).
  needles: ["cookie"],
  // The header as a line (`Cookie: …`) or as a JSON or YAML field (`"Cookie": "…"`).
  pattern: /=(?<=(?:cookie["']?:[ \t]*["']?|;)[ \t]*([A-Za-z0-9_.!#$%&'*+^|~-]{1,128})=)([^;\s"',]{16,4096})/gi,
  secret: (m) => {
    const [, name = "", value = ""] = m;
    if (value.startsWith(REDACTED) || !(SESSION_COOKIE.test(name) || (value.length >= 32 && looksRandom(value)))) return null;
    const lineStart = m.input.lastIndexOf("\n", m.index) + 1;
    if (m.index - lineStart > 4096 || !/cookie["']?:/i.test(m.input.slice(lineStart, m.index))) return null;
    return [1, 1 + value.length];
  },
};

/** Webhook URLs are bearer credentials: whoever has the path can post. */
const WEBHOOKS: Rule = {
  name: "webhook-url",
  needles: ["://"],
  escapeBlind: true,
  pattern:
    /(https?:\/\/(?:hooks\.slack\.com\/(?:services|workflows|triggers)\/|(?:[\w-]+\.)?discord(?:app)?\.com\/api\/webhooks\/\d{5,30}\/|[\w-]+\.webhook\.office\.com\/webhookb2\/|chat\.googleapis\.com\/v1\/spaces\/[\w-]{1,64}\/messages\?))([A-Za-z0-9/_@%=&.-]{20,1024})/g,
  secret: group(2),
};

/** Automation services' hooks, whose secret part is short: Zapier's `catch/<account>/<hook>`, Make's `hook.<zone>.make.com/<id>`, IFTTT's `with/key/<key>`. */
const AUTOMATION_WEBHOOKS: Rule = {
  name: "automation-webhook-url",
  needles: ["zapier.com", "make.com", "ifttt.com"],
  escapeBlind: true,
  pattern: /(https?:\/\/(?:hooks\.zapier\.com\/hooks\/catch\/\d{1,20}\/|hook\.[a-z0-9]{2,8}\.make\.com\/|maker\.ifttt\.com\/trigger\/[\w-]{1,128}\/with\/key\/))([A-Za-z0-9_-]{6,256})/g,
  secret: group(2),
};

/** Signed URLs and SAS tokens: `sig=…` (Azure), `X-Amz-Signature=…`, `Signature=…` (AWS SigV4). */
const SIGNATURE: Rule = {
  name: "url-signature",
  needles: ["sig"],
  escapeBlind: true,
  pattern: /((?:sig|x-amz-signature|x-goog-signature|signature)(?<=(?:^|[^A-Za-z0-9_-]|\\[nrt])(?:sig|x-amz-signature|x-goog-signature|signature))=)([A-Za-z0-9%+/=_.-]{16,1024})/gi,
  secret: group(2),
};

/**
 * Query parameters whose name says nothing about a secret but whose value is one: `?key=` (Google
 * Maps and YouTube API keys, many other APIs), `&auth=` (Firebase's database secret or ID token),
 * `?code=` (an OAuth authorization code, redeemable until used), and AWS's `X-Amz-Credential=` and
 * `X-Amz-Security-Token=` (a session token) and Google's `X-Goog-Credential=` in presigned URLs.
 * Those names also carry ordinary values (`?key=name`, `?code=200`, `?key=reports/2024/a.pdf`), so
 * the value must be long (16 or more) and random: a digit and a letter, and changing character
 * class at least once every three characters, as keys do and words and slugs do not, and not a
 * path or file name with words in it. Names
 * with a secret word in them (`access_token=`, `api_key=`) are the assignment rule's (keys.ts), and
 * signatures (`sig=`, `X-Amz-Signature=`) SIGNATURE's.
 */
const QUERY_CREDENTIAL: Rule = {
  name: "url-query-credential",
  needles: ["key=", "auth=", "code=", "credential=", "token="],
  escapeBlind: true,
  pattern: /([?&](?:amp;)?(?:key|auth|code|x-amz-credential|x-amz-security-token|x-goog-credential)=)([A-Za-z0-9%+/=_.~-]{16,4096})/gi,
  secret: group(2, (m) => {
    const value = m[2] ?? "";
    if (!/\d/.test(value) || !/[A-Za-z]/.test(value) || classChanges(value) * 3 < value.length) return false;
    // A path or a file name with words in it (`reports/2024/summary-q3.pdf`) is an object's key.
    return !(/\/|\.[a-z]{2,4}$/.test(value) && /[a-z]{4}/.test(value));
  }),
};

/** A whole PEM private key block; an unterminated one is redacted to the end of the text. */
const PRIVATE_KEY: Rule = {
  name: "private-key",
  needles: ["private key"],
  escapeBlind: true,
  pattern: /-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY( BLOCK)?-----[\s\S]*?(?:-----END \1PRIVATE KEY\2-----|$(?![\s\S]))/g,
};

/** PuTTY `.ppk` files: the private lines after `Private-Lines: N` (real or escaped newlines). */
const PUTTY_KEY: Rule = {
  name: "putty-private-key",
  needles: ["private-lines"],
  pattern: /(Private-Lines:\s*\d{1,3}(?:\r?\n|(?:\\r)?\\n))((?:[A-Za-z0-9+/=]{1,128}(?:\r?\n|(?:\\r)?\\n|$)){1,256})/g,
  secret: group(2),
};

export const AUTH_RULES: readonly Rule[] = [
  AUTOMATION_WEBHOOKS,
  PRIVATE_KEY,
  PUTTY_KEY,
  AUTHORIZATION,
  DIGEST,
  BEARER,
  COOKIE,
  BASIC,
  URL_CREDENTIALS,
  DSN_KEY,
  WEBHOOKS,
  SIGNATURE,
  QUERY_CREDENTIAL,
];
