// Secrets put into a secret store from a command line: whatever is stored there is a secret.
import { type Rule } from "./rule.ts";
import { ARG, SAME_COMMAND, unquoted, word } from "./cli-args.ts";

/** What `echo` or `printf` writes before its argument: flags and a format. */
const ECHO = String.raw`${word("echo|printf")}[ \t]+(?:-[neE]{1,3}[ \t]+)?(?:'%[^'\n]{0,30}'[ \t]+|"%[^"\n]{0,30}"[ \t]+)?`;
/** Commands that store what they read from stdin as a secret. */
const STORE_NEEDLES = ["secret set", "secret put", "secrets create", "secrets versions", "secret create", "env add", "secrets:set"];
const STORE_PUT = String.raw`(?:npx[ \t]+|bunx[ \t]+)?(?:gh[ \t]+secret[ \t]+set|wrangler[ \t]+secret[ \t]+put|gcloud[ \t]+secrets[ \t]+(?:create|versions[ \t]+add)|docker[ \t]+secret[ \t]+create|vercel[ \t]+env[ \t]+add|firebase[ \t]+functions:secrets:set)\b`;

/** A flag whose value a command stores as a secret, found by the flag and its command looked back at. */
function storedFlag(name: string, flag: string, command: string, needle: string): Rule {
  return {
    name,
    needles: [needle],
    pattern: new RegExp(String.raw`(${flag}(?<=${command}\b[^\n|;&]{0,512}${flag})(?:[ \t]+|=))${ARG}`, "g"),
    secret: unquoted(2, (value) => !/^(?:file|fileb):\/\//.test(value)),
  };
}

export const STORE_RULES: readonly Rule[] = [
  {
    // `echo "…" | gh secret set NAME`, `… | wrangler secret put NAME`, `… | gcloud secrets create NAME --data-file=-`.
    name: "secret-store-stdin",
    needles: STORE_NEEDLES,
    pattern: new RegExp(String.raw`(${ECHO})${ARG}(?=[ \t]*\|[ \t]*${STORE_PUT})`, "g"),
    secret: unquoted(2),
  },
  {
    // `vercel env add NAME production <<< "…"`.
    name: "secret-store-here-string",
    needles: STORE_NEEDLES,
    pattern: new RegExp(String.raw`(${STORE_PUT}${SAME_COMMAND}<<<[ \t]*)${ARG}`, "g"),
    secret: unquoted(2),
  },
  storedFlag("aws-secret-string", "--secret-string", String.raw`aws[ \t]+secretsmanager[ \t]+(?:create-secret|put-secret-value|update-secret)`, "--secret-string"),
  storedFlag("az-keyvault-value", "--value", String.raw`az[ \t]+keyvault[ \t]+secret[ \t]+set`, "keyvault"),
  {
    // `aws ssm put-parameter … --value …` stores a secret when its type is SecureString.
    ...storedFlag("aws-ssm-secure-value", "--value", String.raw`aws[ \t]+ssm[ \t]+put-parameter`, "put-parameter"),
    secret: (m, quoting) => (/SecureString/.test(commandAround(m.input, m.index)) ? unquoted(2)(m, quoting) : null),
  },
];

/** The command `at` is in: from the line's start, a pipe or a `;` before it to the next. */
function commandAround(input: string, at: number): string {
  const before = input.slice(Math.max(0, at - 512), at);
  const after = input.slice(at, at + 512);
  return `${before.slice(Math.max(...["\n", "|", ";", "&"].map((c) => before.lastIndexOf(c))) + 1)}${after.split(/[\n|;&]/, 1)[0]}`;
}
