// The grammar of a command line's arguments the command-line rules share (cli.ts, cli-sudo.ts).
import { isPlaceholder } from "./key-names.ts";
import { BEFORE, group, type Quoting } from "./rule.ts";

/** A flag's value: quoted (a single-quoted one may hold the shell's `'\''`), or a bare word that is not another flag, a redirect or a `$VARIABLE`. */
export const ARG = String.raw`("[^"\n]{1,512}"|'(?:[^'\n]|'\\''){1,512}'|[^\s"'\\;|&<>\x60$-](?:[^\s"'\\;|&<>\x60]|\\[^\s"'\\/nrtbfu]){0,511})`;
/** The value of an attached short flag (`-pPW`): anything up to whitespace or an escape sequence (`\"`, `\n`); another `\x` is an escaped character. */
export const ATTACHED = String.raw`("[^"\n]{1,512}"|'(?:[^'\n]|'\\''){1,512}'|(?:[^\s"'\\\x60]|\\[^\s"'\\/nrtbfu]){1,512})`;
/** A word that starts a command: the literal first (fast to find), then its boundary, looked back at. */
export const word = (alternatives: string): string => String.raw`(?:${alternatives})(?<=${BEFORE}(?:${alternatives}))\b`;

/** Where a tool's own arguments end: a pipe, a `;`, an `&&` or the end of the line. */
export const SAME_COMMAND = String.raw`[^\n|;&]{0,256}?`;

const NOT_A_SECRET = new Set(["true", "false", "yes", "no", "none", "null", "stdin", "prompt", "-"]);

/** The inner value of a quoted argument; the secret span skips the quotes. */
export function unquoted(n: number, accept?: (value: string, quoted: boolean) => boolean) {
  const inner = group(n, (m) => {
    const raw = m[n] ?? "";
    const quoted = /^["']/.test(raw);
    const value = quoted ? raw.slice(1, -1) : raw;
    return value.length >= 3 && !NOT_A_SECRET.has(value.toLowerCase()) && !isPlaceholder(value) && (accept ? accept(value, quoted) : true);
  });
  return (m: RegExpExecArray, quoting: Quoting) => {
    const span = inner(m, quoting);
    if (!span) return null;
    return /^["']/.test(m[n] ?? "") ? ([span[0] + 1, span[1] - 1] as const) : span;
  };
}

/** A secret's name: words of letters or of digits, joined by `-`, `_`, `.` or `/`, one of them a secret word. */
const SECRET_NAME = /^[A-Za-z]+(?:[-_./](?:[A-Za-z]+|\d+))*$/;
const SECRET_NAME_WORD = /(?:^|[-_./])(?:password|passwd|passphrase|secret|token|key|apikey|credentials?|pass|pwd)(?:$|[-_./])/i;
/** docker's and buildkit's secret mount: `id=npmrc,src=…`, `id=aws,env=AWS_SECRET_ACCESS_KEY`. */
const SECRET_MOUNT = /^["']?id=[\w.-]+(?:,(?:src|source|env|type|target|required)=[^\s,]*)*["']?$/;

/**
 * `--secret` names the secret it reads (gcloud's `--secret=db-password`, docker's `--secret
 * id=npmrc,src=…`): such a value is a name, not the secret. Any other flag's value, or one that
 * looks random (`--secret=Xk9-token-Zq7`), is still the secret. The assignment rule (keys.ts) asks
 * too, for `--secret=prod/db-password`.
 */
export function namesASecret(flag: string, value: string): boolean {
  if (flag.replace(/^-+/, "").replace(/[ \t=]+$/, "").toLowerCase() !== "secret") return false;
  const bare = value.replace(/^["']|["']$/g, "");
  return SECRET_MOUNT.test(value) || (SECRET_NAME.test(bare) && SECRET_NAME_WORD.test(bare));
}
