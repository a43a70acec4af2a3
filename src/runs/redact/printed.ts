import { isPlaceholder, isSecretKeyName } from "./key-names.ts";
import { BEFORE, REDACTED, type Rule } from "./rule.ts";

/**
 * A secret a command prints with nothing naming it on its line: `terraform output -raw db_password`
 * then the password on the next line, `vault kv get -field=password …`, `gcloud secrets versions
 * access …`, a Kubernetes Secret's field piped to `base64 -d`. Where the command and its output
 * are one text (a terminal transcript, an answer quoting a session, `set -x` traces), the command
 * says what the next line is: that line goes. A command's output in a tool result of its own
 * holds no command: printed-results.ts hands the call's command to its result (redactPrintedOutput).
 */

/** Commands that print one secret, alone on the line after them; group 1, when set, is the name printed, which must be a secret's. */
const PRINTS_SECRET: readonly RegExp[] = [
  /^(?:terraform|tofu|terragrunt)\s+output\s+(?:-(?:raw|json)\s+)*["']?([\w.-]+)["']?\s*$/,
  /^vault\s+(?:kv\s+get|read)\b.*\s-field[= ]["']?([\w.-]+)/,
  /^aws\s+configure\s+get\s+(?:aws_secret_access_key|aws_session_token)\b/,
  /^aws\s+secretsmanager\s+get-secret-value\b.*--output[= ]text\b/,
  /^aws\s+ssm\s+get-parameters?\b.*--with-decryption\b.*--output[= ]text\b/,
  /^gcloud\s+secrets\s+versions\s+access\b/,
  /^az\s+keyvault\s+secret\s+show\b.*--query[= ]["']?value\b/,
  /^op\s+read\b/,
  /^op\s+item\s+get\b.*\s--fields?[= ]["']?(?:label=)?([\w.-]+)/,
  /^bw\s+get\s+(?:password|totp)\s+\S+\s*$/,
  /^(?:lpass|gopass)\s+show\b.*\s--password\b/,
  /^secret-tool\s+lookup\b/,
  /^keepassxc-cli\s+show\b.*\s-a\s+["']?([\w.-]+)/,
  /^az\s+account\s+get-access-token\b.*--query[= ]["']?accessToken\b/,
  // Logins' tokens: ECR's is base64 of a JSON document no rule reads a secret in, Heroku's a UUID.
  /^aws\s+ecr\s+get-login-password\b/,
  /^heroku\s+auth:token\s*$/,
  /^gh\s+auth\s+token\b/,
  /^gcloud\s+auth\s+(?:application-default\s+)?print-(?:access|identity)-token\b/,
  /^security\s+find-(?:generic|internet)-password\b.*\s-w\b/,
  /^(?:pass|gopass)\s+show\s+\S+\s*$/,
  /^doppler\s+secrets\s+get\b.*--plain\b/,
  /^heroku\s+config:get\s+([\w-]+)/,
  /^printenv\s+(\w+)\s*$/,
  /^echo\s+["']?\$\{?(\w+)\}?["']?\s*$/,
  // A file named as a secret, with no extension (Docker's /run/secrets/db_password).
  /^cat\s+(?:\S*\/)?([\w-]+)\s*$/,
];
/** A pipeline that decodes base64 and names a secret (`kubectl get secret … {.data.password} | base64 -d`). */
const DECODES = /\|\s*base64\s+(?:-d|--decode|-D)\b/;
const NAMES_A_SECRET = /secret|pass|pwd|token|credential|key/i;

const TOOLS = "terraform|tofu|terragrunt|vault|aws|gcloud|az|op|security|pass|gopass|doppler|heroku|printenv|echo|kubectl|cat|jq|yq|bw|lpass|secret-tool|keepassxc-cli|gh";
/**
 * What may stand before a command on its line (or its JSON string): indentation, a shell's prompt,
 * and commands chained before it (`cd /srv && `, `set -e; `), which print nothing as a rule.
 */
const LINE_HEAD = /(?:^|\n|\\n|")[ \t]*(?:[$#%>+❯][ \t]*)?(?:[^\n"\\|]{0,192}(?:&&|;)[ \t]*)?$/;

function printsSecret(command: string): boolean {
  const line = command.replace(/\s+$/, "");
  for (const form of PRINTS_SECRET) {
    const found = form.exec(line);
    if (found) return found[1] === undefined || isSecretKeyName(found[1]);
  }
  return DECODES.test(line) && NAMES_A_SECRET.test(line);
}

/** Groups: 1 the command, 2 its line break, 3 the line it printed. */
export const PRINTED_SECRET: Rule = {
  name: "printed-secret",
  needles: ["cat ", "output", "-field", "configure get", "secretsmanager", "get-parameter", "secrets versions", "keyvault", "op read", "-password", "show", "secrets get", "config:get", "printenv", "echo", "base64", "item get", "bw get", "secret-tool", "get-access-token", "get-login-password", "auth:token", "auth token", "print-access-token", "print-identity-token"],
  pattern: new RegExp(String.raw`((?:${TOOLS})(?<=${BEFORE}(?:${TOOLS}))\b[^\n\r]{0,512}?)(\r?\n|\\r\\n|\\n)("[^"\n\r]{1,512}"|[^\n\r]{1,512}?)(?=\r?\n|\\r\\n|\\n|\\?"|$)`, "g"),
  secret: (m) => {
    const [, command = "", lineBreak = "", printed = ""] = m;
    const head = m.input.slice(Math.max(0, m.index - 256), m.index);
    if (!LINE_HEAD.test(head) || !printsSecret(command.replace(/\\"/g, '"'))) return null;
    const span = printedValue(printed);
    if (span === null) return null;
    const start = command.length + lineBreak.length;
    return [start + span[0], start + span[1]];
  },
};

/** The secret a command printed as `printed`, its line (quoted or not), as [start, end); null when it is no value (a prompt, an error). */
function printedValue(printed: string): readonly [number, number] | null {
  const quoted = /^"(.*)"$/.exec(printed);
  const value = quoted ? quoted[1]! : printed.trim();
  if (value.length < 3 || isPlaceholder(value) || /^(?:[$#%>❯] |error|warning|usage|[│╷╵])/i.test(value)) return null;
  const start = printed.indexOf(value);
  return [start, start + value.length];
}

/** The most commands of a script judged, and the longest script: a call's command past them is not judged. */
const SCRIPT_MAX_COMMANDS = 256;
const SCRIPT_MAX_CHARS = 64 * 1024;
/** A wrapper a command line may open with (`bash -c '…`, `sudo `, a subshell's `(`), and one it may close with. */
const SCRIPT_OPENER = /^(?:(?:ba|z|da)?sh[ \t]+-c[ \t]+["']|sudo[ \t]+(?:-\S+[ \t]+)*|[({][ \t]*|(?:then|do|else)[ \t]+)+/;
const SCRIPT_CLOSER = /[ \t]*(?:["')}]|;;)+$/;

/**
 * The commands of a tool call's `command`: its lines (a `\` at a line's end joins the next), and
 * the commands `&&`, `||` and `;` chain on one, each without a `bash -c '…'` wrapper, `sudo` or a
 * subshell's parentheses; blank lines and comments are none. Empty past SCRIPT_MAX_CHARS.
 */
function scriptCommands(command: string): string[] {
  if (command.length > SCRIPT_MAX_CHARS) return [];
  const commands: string[] = [];
  for (const line of command.replace(/\\\r?\n/g, " ").split(/\r?\n/)) {
    for (const part of line.split(/&&|\|\||;(?!;)/)) {
      const bare = part.trim().replace(SCRIPT_OPENER, "").replace(SCRIPT_CLOSER, "");
      if (bare === "" || bare.startsWith("#")) continue;
      if (commands.length === SCRIPT_MAX_COMMANDS) return commands;
      commands.push(bare);
    }
  }
  return commands;
}

/** How a call's output is judged: not at all, its first value line (one command that prints a secret), or every one-word line (a script, one of whose commands prints one). */
type OutputJudgement = "none" | "first-line" | "one-word-lines";

function judgementOf(command: string): OutputJudgement {
  const commands = scriptCommands(command);
  const printing = commands.filter((each) => each.length <= 512 && printsSecret(each)).length;
  if (printing === 0) return "none";
  return commands.length === 1 ? "first-line" : "one-word-lines";
}

/** Whether `command` (a tool call's) prints a secret, which its output then holds (see redactPrintedOutput). */
export function printsASecret(command: string): boolean {
  return judgementOf(command) !== "none";
}

/**
 * `output`, what `command` printed, with the secret it printed redacted. A tool result holds a
 * command's output apart from the call that ran it; this is the same judgement PRINTED_SECRET
 * makes when the two are one text. One command that prints a secret: the first line that is not
 * blank or a warning. A script of several commands (lines, `&&` chains, `bash -c '…'`), one of which
 * prints a secret: which line is the secret is unknown, so every line that is one word goes (a
 * value printed alone is one; sentences, tables and warnings stay).
 */
export function redactPrintedOutput(command: string, output: string): string {
  const judgement = judgementOf(command);
  if (judgement === "none") return output;
  if (judgement === "one-word-lines") return output.replace(/^([ \t]*)(\S+)([ \t]*\r?)$/gm, (line, indent: string, word: string, end: string) => (printedValue(word) === null ? line : `${indent}${REDACTED}${end}`));
  // Blank lines and warnings the tool wrote to stderr before it (merged into one output) are passed.
  let first = 0;
  for (let lines = 0; lines < 16; lines++) {
    const lineEnd = output.indexOf("\n", first);
    const line = output.slice(first, lineEnd === -1 ? output.length : lineEnd);
    if (lineEnd === -1 || !(line.trim() === "" || WARNING_LINE.test(line))) break;
    first = lineEnd + 1;
  }
  const lineEnd = output.indexOf("\n", first);
  const printed = output.slice(first, lineEnd === -1 ? output.length : lineEnd).replace(/\r$/, "");
  const span = printedValue(printed);
  return span === null ? output : output.slice(0, first + span[0]) + REDACTED + output.slice(first + span[1]);
}

/** A warning a tool prints before its value (vault's `WARNING! The VAULT_ADDR …`, kubectl's `Warning: …`). */
const WARNING_LINE = /^[ \t]*(?:warning|warn)\b/i;
