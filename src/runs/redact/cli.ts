import { isPlaceholder, isSecretKeyName, judgeValue, KEY_WORD_NEEDLES } from "./key-names.ts";
import { BEFORE, type Finding, group, looksRandom, type Rule } from "./rule.ts";
import { ARG, ATTACHED, namesASecret, SAME_COMMAND, unquoted, word } from "./cli-args.ts";
import { ACCOUNT_RULES } from "./cli-accounts.ts";
import { STORE_RULES } from "./cli-stores.ts";
import { SUDO_RULES } from "./cli-sudo.ts";

/**
 * Passwords and tokens on command lines: `--password x`, `--token=x`, `curl -u user:pw`,
 * `mysql -pPW`, `sshpass -p PW`, `redis-cli -a PW`, `openssl … -passin pass:PW`. Short flags mean
 * different things to different tools (`-p` is a port to ssh and docker run), so short flags are
 * only read after the tool that gives them that meaning.
 */

/**
 * `--password x`, `--db-password=x`, `--api-key x`, keytool's `-storepass x`. The flag name must
 * end at the secret word (`--password-stdin`, `--max-tokens` survive); `pass` counts only as a
 * whole word (`--pass`, `--db-pass`, not `--bypass`); `--no-password` takes no value.
 */
const LONG_FLAG: Rule = {
  name: "secret-flag",
  needles: KEY_WORD_NEEDLES,
  pattern: new RegExp(
    String.raw`(-{1,2}(?<=${BEFORE}-{1,2})(?:[A-Za-z0-9][A-Za-z0-9-]{0,64}?)?(?:password|passwd|passphrase|storepass|keypass|pass|pwd|token|secret|api-?key|access-key|secret-key|private-key|client-secret)(?:[ \t]+|=))${ARG}`,
    "gi",
  ),
  secret: (m, quoting) => {
    const flag = m[1] ?? "";
    if (!flagAllowed(flag) || namesASecret(flag, m[2] ?? "") || passwordSwitch(m)) return null;
    return (/=$/.test(flag) ? flagValue : spacedFlagValue)(m, quoting);
  },
};

const flagValue = unquoted(2);
/**
 * Help text says "use --token to pass it": a value after a space counts when it is quoted or
 * looks like a credential (a digit, punctuation or mixed case). An all-lower-case word survives.
 */
const spacedFlagValue = unquoted(2, (value, quoted) => quoted || looksRandom(value) || /[^A-Za-z]/.test(value));

/**
 * A password manager's `show --password` is a switch (print only the password), not a value: what
 * follows is the entry's name (`lpass show --password github.com/work`), which stays. The password
 * is what the command prints (printed.ts).
 */
const PASSWORD_SWITCH_COMMAND = /(?:^|[^\w-])(?:lpass|gopass)[ \t]+show\b[^\n|;&]{0,256}$/;

function passwordSwitch(m: RegExpExecArray): boolean {
  if (!/^--password[ \t]/.test(m[1] ?? "")) return false;
  return PASSWORD_SWITCH_COMMAND.test(m.input.slice(Math.max(0, m.index - 256), m.index));
}

function flagAllowed(flag: string): boolean {
  const name = flag.replace(/^-+/, "").replace(/[ \t=]+$/, "").toLowerCase();
  if (name.startsWith("no-")) return false;
  if (/(?:^|-)(?:pass|pwd)$|storepass$|keypass$/.test(name)) return true;
  return !/(?:pass|pwd)$/.test(name);
}

/** `curl -u user:pw`, `--user user:pw`, `--proxy-user`. Numeric pairs are `uid:gid` (`docker run -u 1000:1000`). */
const USER_PASSWORD: Rule = {
  name: "cli-user-password",
  needles: ["-u"],
  pattern: /((?:-u|--user|--proxy-user)(?<=(?:^|[^\w-]|\\[nrt])(?:-u|--user|--proxy-user))(?:[ \t]*=[ \t]*|[ \t]*)["']?[\w.%+@!~-]{1,128}:)([^\s"'\x60]{1,256})/g,
  secret: group(2, (m) => !/^\d+$/.test(m[2] ?? "") && !isPlaceholder(m[2] ?? "")),
};

/** `smbclient -U user%password`. */
const PERCENT_PASSWORD: Rule = {
  name: "cli-user-percent-password",
  needles: ["-U"],
  pattern: /(-U(?<=(?:^|[^\w-]|\\[nrt])-U)[ \t]+["']?[^\s%"']{1,128}%)([^\s"'\x60]{1,256})/g,
  secret: group(2, (m) => !isPlaceholder(m[2] ?? "")),
};

/** Tools whose short flag carries a password. Each rule's needles name its tools: most text names none. */
const TOOL_FLAGS: readonly Rule[] = [
  {
    name: "mysql-p",
    needles: ["mysql", "mariadb"],
    pattern: new RegExp(String.raw`(${word("mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlshow|mysqlsh|mariadb|mariadb-dump")}${SAME_COMMAND}\s-p)${ATTACHED}`, "g"),
    secret: unquoted(2),
  },
  {
    name: "sshpass-p",
    needles: ["sshpass"],
    pattern: new RegExp(String.raw`(${word("sshpass")}${SAME_COMMAND}\s-p[ \t]*)${ATTACHED}`, "g"),
    secret: unquoted(2, (value) => !/^\d{1,5}$/.test(value)),
  },
  {
    name: "redis-cli-a",
    needles: ["redis-cli"],
    pattern: new RegExp(String.raw`(${word("redis-cli")}${SAME_COMMAND}\s-a[ \t]+)${ARG}`, "g"),
    secret: unquoted(2),
  },
  {
    name: "login-p",
    needles: ["login"],
    pattern: new RegExp(String.raw`(${word("docker|podman|nerdctl|buildah|skopeo|helm registry|oras|az")}\s+login\b${SAME_COMMAND}\s-p[ \t]+)${ARG}`, "g"),
    secret: unquoted(2),
  },
  {
    name: "openssl-pass",
    needles: ["pass:"],
    pattern: new RegExp(String.raw`(-(?:passin|passout|pass|password|passphrase)(?<=${BEFORE}-(?:passin|passout|pass|password|passphrase))[ \t]+pass:)([^\s"'\\\x60]{1,512})`, "g"),
    secret: group(2, (m) => !isPlaceholder(m[2] ?? "")),
  },
  {
    name: "openssl-k",
    needles: ["openssl"],
    pattern: new RegExp(String.raw`(${word("openssl")}\s+enc\b${SAME_COMMAND}\s-k[ \t]+)${ARG}`, "g"),
    secret: unquoted(2),
  },
  {
    // `htpasswd -b file user pw`, `htpasswd -nb user pw`.
    name: "htpasswd-b",
    needles: ["htpasswd"],
    pattern: /((?:(?<![\w-])|(?<=\\[nrt]))htpasswd[ \t]+(?=-[^\s\x60]*b)(?:-[^\s\x60]*n[^\s\x60]*[ \t]+[^\s\x60]+|-[^\s\x60]+[ \t]+[^\s\x60]+[ \t]+[^\s\x60]+)[ \t]+)("[^"\n]{1,512}"|'[^'\n]{1,512}'|[^\s"'\\\x60]{1,512})/g,
    secret: unquoted(2),
  },
  {
    // OpenLDAP's clients bind with `-w password` (`-W` prompts for it).
    name: "ldap-w",
    needles: ["ldap"],
    pattern: new RegExp(String.raw`(${word("ldapsearch|ldapmodify|ldapadd|ldapdelete|ldapmodrdn|ldappasswd|ldapwhoami|ldapcompare|ldapexop")}${SAME_COMMAND}\s-w[ \t]+)${ARG}`, "g"),
    secret: unquoted(2),
  },
  {
    // SQL Server's clients: `sqlcmd -U sa -P pw`, `bcp … -P pw` (`-Ppw` too).
    name: "sqlserver-P",
    needles: ["sqlcmd", "bcp", "isql", "osql"],
    pattern: new RegExp(String.raw`(${word("sqlcmd|bcp|isql|osql")}${SAME_COMMAND}\s-P[ \t]*)${ARG}`, "g"),
    secret: unquoted(2),
  },
  {
    // MongoDB's shell and tools: `-p password` after `-u user`.
    name: "mongo-p",
    needles: ["mongo"],
    pattern: new RegExp(String.raw`(${word("mongosh|mongo|mongodump|mongorestore|mongoexport|mongoimport|mongostat|mongotop")}${SAME_COMMAND}\s-p[ \t]+)${ARG}`, "g"),
    secret: unquoted(2),
  },
  {
    // A key's passphrases, old and new: `ssh-keygen -p -P old -N new` (`-N ''` is none). The
    // pattern starts at the flag and looks back for the command, so both flags are read.
    name: "ssh-keygen-passphrase",
    needles: ["ssh-keygen"],
    pattern: new RegExp(String.raw`(-[NP](?<=(?:^|[^\w-]|\\[nrt])ssh-keygen\b[^\n|;&]{0,256}\s-[NP])[ \t]+)${ARG}`, "g"),
    secret: unquoted(2),
  },
  {
    // An archive's password: `zip -P pw`, `unzip -P pw`, `7z a -ppw`.
    name: "archive-password",
    needles: ["zip", "7z"],
    pattern: new RegExp(String.raw`(${word("zip|unzip|zipcloak")}${SAME_COMMAND}\s-P[ \t]+|${word("7z|7za|7zr")}${SAME_COMMAND}\s-p)${ATTACHED}`, "g"),
    secret: unquoted(2),
  },
  {
    // `gh secret set NAME --body value` (`-b value`): the value is the secret, whatever NAME is.
    name: "gh-secret-body",
    needles: ["secret"],
    pattern: new RegExp(String.raw`(${word("gh")}[ \t]+secret[ \t]+set\b${SAME_COMMAND}\s(?:--body(?:[ \t]+|=)|-b[ \t]*))${ARG}`, "g"),
    secret: unquoted(2),
  },
  {
    // A password piped to `sudo -S` (`--stdin`: it reads the password from stdin): `echo pw | sudo -S cmd`,
    // `printf '%s\n' pw | sudo -kS cmd`. A variable (`echo "$PW"`) is no secret.
    name: "sudo-stdin",
    needles: ["sudo"],
    pattern: new RegExp(
      String.raw`(${word("echo|printf")}[ \t]+(?:-[neE]{1,3}[ \t]+)?(?:'%[^'\n]{0,30}'[ \t]+|"%[^"\n]{0,30}"[ \t]+)?)${ARG}(?=[ \t]*\|[ \t]*sudo\b[^\n|;&]{0,64}?[ \t](?:-[A-Za-z]*S|--stdin\b))`,
      "g",
    ),
    secret: unquoted(2),
  },
  {
    // A password or token piped to a login that reads it from stdin: `echo pw | docker login
    // --password-stdin`, `… | helm registry login --password-stdin`, `echo ghp_… | gh auth login
    // --with-token`, `echo tok | vault login -`. A variable (`echo "$CR_PAT"`) is no secret.
    name: "login-stdin",
    needles: ["-stdin", "--with-token", "vault login"],
    pattern: new RegExp(
      String.raw`(${word("echo|printf")}[ \t]+(?:-[neE]{1,3}[ \t]+)?(?:'%[^'\n]{0,30}'[ \t]+|"%[^"\n]{0,30}"[ \t]+)?)${ARG}(?=[ \t]*\|[ \t]*(?:[^\n|;&]{0,128}?[ \t](?:--password-stdin|--with-token)\b|vault[ \t]+login[^\n|;&]{0,64}?[ \t]-(?:[ \t]|$)))`,
      "g",
    ),
    secret: unquoted(2),
  },
  {
    // `vault login <token>`: the token is its positional argument (`-method=…` logs in otherwise; `-` reads stdin).
    name: "vault-login",
    needles: ["vault login"],
    pattern: new RegExp(String.raw`(${word("vault")}[ \t]+login(?:[ \t]+-(?:no-print|no-store|address=\S+|namespace=\S+|format=\S+))*[ \t]+)${ARG}`, "g"),
    secret: unquoted(2, (value) => !value.includes("=") && looksRandom(value)),
  },
  {
    // `npm config set //registry.npmjs.org/:_authToken <token>` (pnpm, yarn alike): the setting's name, then its value.
    name: "package-manager-config-set",
    needles: ["config set"],
    pattern: new RegExp(String.raw`(${word("npm|pnpm|yarn")}[ \t]+config[ \t]+set[ \t]+(?:--[a-z-]+[ \t]+)?\S{0,256}(?:_authToken|_password|_auth|npmAuthToken)[ \t]+)${ARG}`, "g"),
    secret: unquoted(2),
  },
  {
    // `aws configure set aws_secret_access_key X`.
    name: "aws-configure-set",
    needles: ["configure"],
    pattern: /((?:(?<![\w-])|(?<=\\[nrt]))aws\s+configure\s+set\s+\S{0,64}(?:secret_access_key|session_token)[ \t]+)([^\s"']{8,512})/g,
    secret: group(2),
  },
];

/** An Oracle user name, and the password after its `/` in `user/password@service`. */
const ORACLE_USER = "[A-Za-z0-9_$#.]{1,128}";
const ORACLE_PASSWORD = String.raw`([^\s/@"'\\\x60]{1,256})`;

/**
 * Oracle's `user/password@service` connect strings. Its tools take one (or `user/password`, a local connection) as an
 * argument, sqlldr as `userid=user/password`; SQL*Plus's `CONNECT user/password` starts a line.
 * `/ as sysdba` (OS authentication) and `/nolog` have no user, and a `$VARIABLE` no password. A line
 * (or a JSON string) that is a CONNECT command ends at its password or service.
 */
const ORACLE_RULES: readonly Rule[] = [
  {
    // In a JDBC URL (`jdbc:oracle:thin:scott/tiger@db:1521/ORCL`) or given to a driver
    // (`cx_Oracle.connect("scott/tiger@db/orcl")`): the password goes, whatever its shape.
    name: "oracle-connect-string",
    needles: ["jdbc:oracle", "connect("],
    pattern: /((?:jdbc:oracle:[A-Za-z0-9]{1,16}:|connect\([ \t]{0,16}["'])[A-Za-z0-9_$#.]{1,128}\/)([^\s/@"'\\\x60]{1,256})(?=@)/g,
    secret: group(2, (m) => !isPlaceholder(m[2] ?? "")),
  },
  {
    name: "oracle-tool",
    needles: ["sqlplus", "sqlldr", "expdp", "impdp", "rman", "dgmgrl"],
    pattern: new RegExp(String.raw`(${word("sqlplus|sqlldr|expdp|impdp|rman|dgmgrl")}${SAME_COMMAND}(?:[ \t]|userid=)["']?${ORACLE_USER}/)${ORACLE_PASSWORD}(?=[@\s"'\\]|$)`, "gi"),
    secret: unquoted(2),
  },
  {
    name: "oracle-connect-command",
    needles: ["conn"],
    pattern: new RegExp(String.raw`((?:conn|connect)(?<=(?:^|[\n>"]|\\n)[ \t]{0,16}(?:conn|connect))[ \t]+${ORACLE_USER}/)${ORACLE_PASSWORD}(?=@|[ \t]{0,16}(?:[;"]|\r?\n|\\[nr"]|$))`, "gi"),
    secret: unquoted(2),
  },
];

/**
 * `kubectl create secret generic NAME --from-literal=key=value`: every literal is one of the
 * Secret's values, whatever its key is called (as a Secret's `data` is: key-stores.ts), so each
 * goes; placeholders (`"$DATABASE_URL"`, `${TOKEN}`) survive. Only after `create secret` in the
 * same command: a ConfigMap's literals are configuration. Group 2 is the value.
 */
const SECRET_LITERAL: Rule = {
  name: "kubectl-secret-literal",
  needles: ["--from-literal"],
  pattern: new RegExp(String.raw`(--from-literal(?<=create[ \t]{1,16}secret\b[^\n|;&]{0,1024}--from-literal)[= ][A-Za-z0-9._-]{1,253}=)${ATTACHED}`, "g"),
  secret: unquoted(2),
};

/** One `path=value` of a Helm `--set` list; the value runs to a comma, whitespace, a quote or an escape. */
const SET_PAIR = /([A-Za-z0-9_.[\]-]{1,256})=([^\s,"'\\\x60]{0,512})/y;
/** The last field of a store's path that names a secret rather than holding one (`secrets.existingSecret=db-creds`). */
const SET_NAMING_FIELD = /(?:name|ref|existingsecret|enabled|create|annotations|labels|mountpath|path|file)$/i;

/**
 * Helm's `--set secrets.db=hunter2` (and `--set-string`, `--set-literal`, a comma-separated list of
 * them): a value under a store of secrets (a path with a secret name before its last field:
 * `secrets.db`, `credentials.aws.id`, `secret.value`) is judged as one stored under that name, as a
 * `KEY=value` is. A path that ends at a secret name (`auth.password=…`) is the assignment rule's.
 * Group 1 is everything before the first pair.
 */
const HELM_SET: Rule = {
  name: "helm-set",
  needles: ["--set"],
  pattern: new RegExp(String.raw`(--set(?:-string|-literal)?(?<=${BEFORE}--set(?:-string|-literal)?)(?:[ \t]+|=)["']?)(?=[A-Za-z0-9_.[\]-]{1,256}=)`, "g"),
  findings: (m) => {
    const found: Finding[] = [];
    const input = m.input;
    let at = m.index + m[0].length;
    for (let items = 0; items < 64; items++) {
      SET_PAIR.lastIndex = at;
      const pair = SET_PAIR.exec(input);
      if (pair === null) break;
      const [whole, path = "", value = ""] = pair;
      const fields = path.split(".");
      const store = fields.slice(0, -1).findLast((field) => isSecretKeyName(field.replace(/\[\d+\]$/, "")));
      if (store !== undefined && !SET_NAMING_FIELD.test(fields.at(-1)!) && judgeValue({ key: store, op: "=", spaced: false, value, endsLine: false })) {
        const start = at + path.length + 1 - m.index;
        found.push({ start, end: start + value.length });
      }
      at += whole.length;
      if (input[at] !== ",") break;
      at++;
    }
    HELM_SET.pattern.lastIndex = Math.max(HELM_SET.pattern.lastIndex, at);
    return found;
  },
};

export const CLI_RULES: readonly Rule[] = [LONG_FLAG, USER_PASSWORD, PERCENT_PASSWORD, SECRET_LITERAL, HELM_SET, ...TOOL_FLAGS, ...ORACLE_RULES, ...SUDO_RULES, ...ACCOUNT_RULES, ...STORE_RULES];
