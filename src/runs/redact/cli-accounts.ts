// Passwords set for an account on a command line: the tools that take the new password itself.
import { isPlaceholder } from "./key-names.ts";
import type { Rule } from "./rule.ts";
import { ARG, unquoted, word } from "./cli-args.ts";

/** What `echo` or `printf` writes before its argument: flags and a format. */
const ECHO = String.raw`${word("echo|printf")}[ \t]+(?:-[neE]{1,3}[ \t]+)?(?:'%[^'\n]{0,30}'[ \t]+|"%[^"\n]{0,30}"[ \t]+)?`;
/** A pipe into the command, `sudo` before it or not. */
const PIPED_TO = (command: string) => String.raw`[ \t]*\|[ \t]*(?:sudo[ \t]+(?:-\S+[ \t]+)*)?${command}`;
/** ARG, ending at a `)` too: the command is often inside `$(…)`. */
const WORD_ARG = String.raw`("[^"\n]{1,512}"|'[^'\n]{1,512}'|[^\s"'\\;|&<>\x60$()-][^\s"'\\;|&<>\x60()]{0,511})`;
/** A `user:password` pair: the user, and the password (a group), with no quote, escape or `$VARIABLE`. */
const USER = String.raw`[^\s:"'\\$]{1,64}`;
const PASSWORD = String.raw`([^\s"'\\$]{1,256})`;

/** The password of a pair (group 3), after everything before it (group 1, which holds the quote, group 2). */
const pairPassword = (m: RegExpExecArray): readonly [number, number] | null => {
  const [, head = "", , password = ""] = m;
  return isPlaceholder(password) ? null : [head.length, head.length + password.length];
};

export const ACCOUNT_RULES: readonly Rule[] = [
  {
    // `echo 'root:pw' | chpasswd` (a Dockerfile's RUN).
    name: "chpasswd-piped",
    needles: ["chpasswd"],
    pattern: new RegExp(String.raw`(${ECHO}(["']?)${USER}:)${PASSWORD}\2(?=${PIPED_TO("chpasswd")})`, "g"),
    secret: pairPassword,
  },
  {
    // `chpasswd <<< 'app:pw'`.
    name: "chpasswd-here-string",
    needles: ["chpasswd"],
    pattern: new RegExp(String.raw`(${word("chpasswd")}[^\n|;&]{0,64}<<<[ \t]*(["']?)${USER}:)${PASSWORD}\2`, "g"),
    secret: pairPassword,
  },
  {
    // `echo pw | passwd --stdin app`, `echo -e 'pw\npw' | passwd app`.
    name: "passwd-stdin",
    needles: ["passwd"],
    pattern: new RegExp(String.raw`(${ECHO})${ARG}(?=${PIPED_TO("passwd")}\b)`, "g"),
    secret: unquoted(2),
  },
  {
    // `openssl passwd -6 pw`: hashes the password it is given (`-stdin` reads it).
    name: "openssl-passwd",
    needles: ["openssl"],
    pattern: new RegExp(String.raw`(${word("openssl")}[ \t]+passwd(?:[ \t]+-(?:1|5|6|apr1|aixmd5|crypt|quiet|table|noverify|reverse|salt[ \t]+\S+))*[ \t]+)${WORD_ARG}`, "g"),
    secret: unquoted(2),
  },
  {
    // Windows' `net user NAME PASSWORD [/add]` (`*` prompts for it; `/delete` sets none).
    name: "net-user",
    needles: ["net user"],
    pattern: new RegExp(String.raw`(${word("net")}[ \t]+user[ \t]+(?:"[^"\n]{1,64}"|[^\s/"]{1,64})[ \t]+)([^\s/*"'][^\s"']{0,255}|"[^"\n]{1,256}")`, "gi"),
    secret: unquoted(2),
  },
  {
    // `rabbitmqctl add_user NAME PASSWORD`, `change_password NAME PASSWORD`.
    name: "rabbitmqctl-password",
    needles: ["rabbitmqctl"],
    pattern: new RegExp(String.raw`(${word("rabbitmqctl")}[ \t]+(?:add_user|change_password)[ \t]+\S{1,64}[ \t]+)${ARG}`, "g"),
    secret: unquoted(2),
  },
  {
    // MinIO's `mc alias set ALIAS URL ACCESS_KEY SECRET_KEY` (`mc config host add`, the older form).
    name: "mc-alias-secret",
    needles: ["alias set", "host add"],
    pattern: new RegExp(String.raw`(${word("mc")}[ \t]+(?:alias[ \t]+set|config[ \t]+host[ \t]+add)[ \t]+\S{1,64}[ \t]+\S{1,512}[ \t]+\S{1,128}[ \t]+)${ARG}`, "g"),
    secret: unquoted(2),
  },
];

