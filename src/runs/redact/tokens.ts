import { anchored, BEFORE, classChanges, E, hasDigit, looksRandom, prefixed as p, type Rule } from "./rule.ts";
import { WRAPPED_JWT } from "./wrapped-jwt.ts";

/**
 * An AWS secret access key with no label beside it: exactly 40 characters of base64's alphabet,
 * not part of a longer run, with upper case, lower case and a digit, and as random as a key is (a
 * random 40-character key changes character class about 34 times; a camel-cased path or an
 * identifier of that length, under 20). Git SHAs (lower-case hex) never qualify.
 */
const AWS_SECRET_KEY: Rule = {
  name: "aws-secret-key",
  escapeBlind: true, // no needles: a random key has no fixed part
  minChars: 40,
  pattern: /(?:(?<![A-Za-z0-9/+=_-])|(?<=\\[nrt]))[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=_-])/g,
  secret: (m) => {
    const key = m[0];
    if (!/[A-Z]/.test(key) || !/[a-z]/.test(key) || !/\d/.test(key)) return null;
    return classChanges(key) >= 20 || keyIdOnLine(m.input, m.index, key.length) ? [0, key.length] : null;
  },
};

/** An AWS access key ID, as a whole word. */
const AWS_KEY_ID = /(?:^|[^A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])/;
/** How far along its line a secret key's ID is looked for, each way. */
const KEY_ID_REACH = 256;

/**
 * Whether an access key ID sits on the line of the key at `index` (`aws iam create-access-key
 * --output text`: `ACCESSKEY  AKIA…  <date>  <secret>  Active`): beside its ID a key is taken
 * whatever its randomness, so AWS's documentation key (`wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY`,
 * which changes class 16 times) goes with its `AKIAIOSFODNN7EXAMPLE`.
 */
function keyIdOnLine(input: string, index: number, length: number): boolean {
  const from = Math.max(0, index - KEY_ID_REACH);
  const to = Math.min(input.length, index + length + KEY_ID_REACH);
  const before = input.slice(from, index);
  const after = input.slice(index + length, to);
  const realBreak = before.lastIndexOf("\n");
  const escapedBreak = before.lastIndexOf("\\n");
  const lineBefore = before.slice(Math.max(realBreak === -1 ? 0 : realBreak + 1, escapedBreak === -1 ? 0 : escapedBreak + 2));
  const breakAfter = [after.indexOf("\n"), after.indexOf("\\n")].filter((at) => at !== -1);
  const lineAfter = breakAfter.length === 0 ? after : after.slice(0, Math.min(...breakAfter));
  return AWS_KEY_ID.test(lineBefore) || AWS_KEY_ID.test(lineAfter);
}

/**
 * A Twilio auth token passed by position after its account SID, as every Twilio client takes them:
 * `Client('AC…', '<32 hex>')`, `twilio("AC…", "…")`, `Twilio.init(…)`. The SID names the account;
 * the hex string after it is the token. The pattern starts at the SID's literal `AC`.
 */
const TWILIO_AUTH_ARGUMENT: Rule = {
  name: "twilio-auth-argument",
  // Every match has a quote before the SID: `ac` alone is in most English text (each, access, react).
  needles: [`"AC`, "'AC"],
  pattern: /(AC[0-9a-f]{32}(?<=["']AC[0-9a-f]{32})(["'])[ \t]{0,16},[ \t]{0,16}\2)([0-9a-f]{32})(?=\2)/g,
  secret: (m) => [(m[1] ?? "").length, (m[1] ?? "").length + (m[3] ?? "").length],
};

/**
 * Credentials with a recognisable shape: a provider prefix and a random body. The whole token is
 * the secret. Lengths are the providers' documented (or observed) minimums, kept loose so a format
 * change does not let a key through; the prefix and the word boundaries keep look-alikes out.
 */
export const TOKEN_RULES: readonly Rule[] = [
  // AI providers. `sk-` is also an ordinary word prefix (`sk-learn-compatible-…`): demand randomness.
  p("openai-anthropic", "sk-", "[A-Za-z0-9_-]{20,}", looksRandom), // also sk-ant-, OpenRouter sk-or-, DeepSeek
  p("huggingface", ["hf_", "api_org_"], "[A-Za-z0-9]{30,}"),
  p("groq", "gsk_", "[A-Za-z0-9]{40,}"),
  p("xai", "xai-", "[A-Za-z0-9]{40,}"),
  p("replicate", "r8_", "[A-Za-z0-9]{30,}"),
  p("perplexity", "pplx-", "[A-Za-z0-9]{40,}"),
  p("langsmith", "lsv2_", "(?:pt|sk)_[A-Za-z0-9_]{30,}"),
  p("fireworks", "fw_", "[A-Za-z0-9]{20,}", hasDigit),
  p("cerebras", "csk-", "[a-z0-9]{40,}", hasDigit),
  p("elevenlabs", "sk_", "[a-f0-9]{48}"),
  p("tavily", ["tvly-dev-", "tvly-prod-", "tvly-"], "[A-Za-z0-9]{30,}", hasDigit),
  p("pinecone", "pcsk_", "[A-Za-z0-9]{4,8}_[A-Za-z0-9]{40,}"),

  // Cloud.
  { name: "aws-key-id", needles: ["AKIA", "ASIA", "ABIA", "ACCA", "A3T"], escapeBlind: true, pattern: /(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])(?<=(?:^|[^A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9]))[A-Z0-9]{16}(?![A-Z0-9])/g },
  AWS_SECRET_KEY,
  // An STS session token (`aws sts … --output text`, `aws configure export-credentials`): every one
  // opens with the same base64 of its header, whatever the region (`IQoJb3JpZ2luX2Vj`; older
  // `FwoGZXIvYXdzE`, `FQoGZXIvYXdzE`, `AQoDYXdzE`), and runs hundreds of base64 characters.
  { name: "aws-session-token", needles: ["IQoJb3JpZ2luX2Vj", "oGZXIvYXdzE", "AQoDYXdzE"], escapeBlind: true, pattern: /(?:IQoJb3JpZ2luX2Vj|F[wQ]oGZXIvYXdzE|AQoDYXdzE)(?<=(?:^|[^A-Za-z0-9+/=_-]|\\[nrt])(?:IQoJb3JpZ2luX2Vj|F[wQ]oGZXIvYXdzE|AQoDYXdzE))[A-Za-z0-9+/]{80,}={0,2}(?![A-Za-z0-9+/=_-])/g },
  p("google-api-key", "AIza", "[0-9A-Za-z_-]{35}"),
  p("google-oauth-access", String.raw`ya29\.`, "[0-9A-Za-z_-]{20,}"),
  { name: "google-oauth-refresh", needles: ["1//0"], escapeBlind: true, pattern: new RegExp(String.raw`1//0(?<=(?:^|[^A-Za-z0-9_/:-])1//0)[0-9A-Za-z_-]{30,}${E}`, "g") },
  p("google-oauth-client-secret", "GOCSPX-", "[A-Za-z0-9_-]{20,}"),
  anchored("azure-ad-client-secret", "Q~", String.raw`Q~(?<=(?<![A-Za-z0-9_~.-])([A-Za-z0-9_~.]{3}\d)Q~)[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])`),
  p("alibaba-key-id", "LTAI", "[A-Za-z0-9]{12,20}", hasDigit),
  p("digitalocean", "do[opr]_v1_", "[a-f0-9]{64}"),
  p("vault", String.raw`hv[sb]\.`, "[A-Za-z0-9_-]{24,}"),
  // Vault's older service and batch tokens: `s.` or `b.` and 24 random characters. A member
  // expression of that length (`s.accessTokenFromStorage2`) changes character class far less often.
  p("vault-legacy", String.raw`[sb]\.`, "[A-Za-z0-9]{24}", (token) => /\d/.test(token) && /[A-Z]/.test(token) && /[a-z]/.test(token) && classChanges(token.slice(2)) >= 10),
  anchored("terraform-cloud", ".atlasv1.", String.raw`\.atlasv1\.(?<=${BEFORE}([A-Za-z0-9]{14})\.atlasv1\.)[A-Za-z0-9_-]{60,}${E}`),
  p("doppler", String.raw`dp\.(?:pt|st|sa|ct|scim|audit)\.`, String.raw`(?:[a-z0-9_-]{1,32}\.)?[A-Za-z0-9]{40,}`),
  p("pulumi", "pul-", "[a-f0-9]{40}"),
  p("heroku", "HRKU-", "[A-Za-z0-9_-]{40,}"),
  p("supabase", "sbp_", "[a-f0-9]{40}"),
  p("supabase-secret", "sb_secret_", "[A-Za-z0-9_-]{20,}", hasDigit),
  p("databricks-oauth", "dose", "[a-f0-9]{32}"),
  p("fly", ["fo1_", "fm1[ar]_", "fm2_"], "[A-Za-z0-9_+/=-]{40,}", hasDigit),
  p("render", "rnd_", "[A-Za-z0-9]{32,}", hasDigit),
  p("netlify", "nfp_", "[A-Za-z0-9]{36,}", hasDigit),
  // Dropbox's short-lived access tokens: `sl.` and well over a hundred random characters.
  p("dropbox", String.raw`sl\.`, "[A-Za-z0-9_=.-]{130,}", looksRandom),
  p("databricks", "dapi", String.raw`[a-f0-9]{32}(?:-\d)?`),
  p("cloudflare-origin-ca", String.raw`v1\.0-`, "[a-f0-9]{24}-[a-f0-9]{100,}"),
  p("age-secret-key", "AGE-SECRET-KEY-", "1[0-9A-Z]{58}"),
  // A BIP-32 extended private key (a wallet's root or account key): base58 after its version prefix.
  p("bip32-extended-private-key", ["xprv", "tprv", "yprv", "zprv"], "[1-9A-HJ-NP-Za-km-z]{100,108}"),

  // Version control and packages.
  p("github", "gh[pousr]_", "[A-Za-z0-9]{36,}"),
  p("github-fine-grained", "github_pat_", "[A-Za-z0-9_]{22,}"),
  p("gitlab", "gl(?:pat|dt|rt|ptt|cbt|oas|soat|ffct|imt|agent|ft|wt)-", String.raw`[A-Za-z0-9_-]{20,}(?:\.[a-z0-9]{9})?`),
  // A runner registration token: GitLab's fixed prefix, then the token.
  p("gitlab-runner-registration", "GR1348941", "[A-Za-z0-9_-]{20,}"),
  p("docker-hub", "dckr_(?:pat|oat)_", "[A-Za-z0-9_-]{24,}"),
  p("atlassian", ["ATATT", "ATCTT", "ATBB"], "[A-Za-z0-9_=.-]{32,}"),
  p("npm", "npm_", "[A-Za-z0-9]{36}"),
  p("pypi", "pypi-", "AgE[A-Za-z0-9_-]{50,}"),
  p("rubygems", "rubygems_", "[a-f0-9]{48}"),
  p("nuget", "oy2", "[a-z0-9]{43}", hasDigit),
  p("clojars", "CLOJARS_", "[a-z0-9]{60}"),
  p("linear", "lin_(?:api|oauth)_", "[A-Za-z0-9]{32,}"),
  p("postman", "PMAK-", "[a-f0-9]{24}-[a-f0-9]{34}"),
  p("figma", "figd_", "[A-Za-z0-9_-]{30,}"),
  p("grafana", ["glc_", "glsa_"], "[A-Za-z0-9+/_]{32,}={0,2}"),
  p("sentry", "sntry[su]_", "[A-Za-z0-9+/=_]{40,}"),
  p("newrelic", "NRAK-", "[A-Z0-9]{27}"),
  p("notion", ["secret_", "ntn_"], "[A-Za-z0-9]{40,}", hasDigit),
  p("onepassword-service", "ops_", "eyJ[A-Za-z0-9_-]{20,}"),

  // Payment.
  p("stripe", "(?:sk|rk|pk)_(?:live|test)_", "[A-Za-z0-9]{16,}"),
  p("stripe-webhook", "whsec_", "[A-Za-z0-9+/=]{24,}"),
  p("square", "sq0(?:atp|csp|idp)-", "[0-9A-Za-z_-]{22,}"),
  // Square production tokens (EAAA…) and Meta/Facebook tokens (EAA…): long and random.
  p("square-meta", "EAA", "[A-Za-z0-9_-]{60,}", hasDigit),
  p("braintree", String.raw`access_token\$(?:production|sandbox)\$`, String.raw`[0-9a-z]{16}\$[0-9a-f]{32}`),
  p("shopify", "shp(?:at|ss|ca|pa)_", "[a-fA-F0-9]{32}"),
  p("flutterwave", ["FLWSECK-", "FLWSECK_TEST-"], "[a-f0-9]{32}-X"),

  // Chat and messaging.
  p("slack", ["xox[abposre]-", String.raw`xoxe\.xox[bp]-`], "[A-Za-z0-9-]{10,}"),
  p("slack-app", "xapp-", "[A-Za-z0-9-]{20,}"),
  // A browser session's client token, and its `d` cookie (often URL-encoded: `%2B`, `%3D`).
  p("slack-client", "xox[cd]-", "[A-Za-z0-9%-]{20,}"),
  // Discord bot token: base64 user id . timestamp . HMAC.
  { ...p("discord", "[MNO]", String.raw`[A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}`, looksRandom), minChars: 1 + 23 + 1 + 6 + 1 + 27 },
  // Telegram bot token `123456789:AA…`, also inside `api.telegram.org/bot<token>/`.
  anchored("telegram", ":AA", String.raw`:AA(?<=(?:/bot|(?:^|[^A-Za-z0-9_:-]))(\d{6,12}):AA)[A-Za-z0-9_-]{30,}${E}`),
  p("twilio-api-key", "SK", "[0-9a-f]{32}"),
  TWILIO_AUTH_ARGUMENT,
  p("sendgrid", String.raw`SG\.`, String.raw`[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{30,}`),
  p("mailgun", "key-", "[0-9a-zA-Z]{32}", hasDigit),
  p("resend", "re_", "[A-Za-z0-9]{8}_[A-Za-z0-9]{24}", hasDigit),
  p("brevo", ["xkeysib-", "xsmtpsib-"], "[a-f0-9]{64}-[A-Za-z0-9]{16}"),
  p("hubspot", String.raw`pat-(?:na|eu|ap)\d-`, "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"),
  // A Firebase Cloud Messaging server key: an id, `:APA91b`, then the key.
  p("firebase-messaging", "AAAA", "[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{100,}"),
  { ...anchored("mailgun-hex", "-", String.raw`-(?<=${BEFORE}([0-9a-f]{32})-)[0-9a-f]{8}-[0-9a-f]{8}${E}`), minChars: 32 + 1 + 8 + 1 + 8 },
  anchored("mailchimp", "-us", String.raw`-us(?<=${BEFORE}([0-9a-f]{32})-us)\d{1,2}${E}`),
  p("mapbox-secret", String.raw`sk\.`, String.raw`eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}`),

  // JWTs, signed or not (`alg: none` ends with an empty signature after the last dot).
  // Its needle is the second segment's head: `ey` alone is in every `key` and `they`.
  { ...p("jwt", "ey", String.raw`[A-Za-z0-9_-]{10,}\.ey[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*`), needles: [".ey"] },
  WRAPPED_JWT,
];
