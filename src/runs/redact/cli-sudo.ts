// Passwords given to `sudo -S` on its standard input: a here-string or a here-document's first line.
import { isPlaceholder } from "./key-names.ts";
import type { Rule } from "./rule.ts";
import { ARG, unquoted } from "./cli-args.ts";

/** `sudo`'s own options, each with its argument when it takes one (`-u root`, `-p prompt`): group 1. The command follows them. */
const SUDO_OPTIONS = /(?:^|[\s("'\x60])sudo((?:[ \t]+(?:-[A-Za-z]*[ugpCDhRTUrt][ \t]+[^\s-]\S*|-[A-Za-z]+|--[a-z-]+(?:=\S*)?))*)/;
/** The option that makes sudo read the password from its standard input. */
const STDIN_OPTION = /(?:^|[ \t])(?:-[A-Za-z]*S[A-Za-z]*|--stdin)(?=[ \t]|$)/;

/** How far back a here-string's command is read for its `sudo -S`. */
const COMMAND_MAX = 512;

/**
 * The last command judged: a line of many here-strings (or a text of many lines) is read forward
 * once, not 512 characters back from each, so the rule stays linear. Forgotten once the text is
 * scanned (forgetJudged), so no text (megabytes, with its secrets in plain) stays in memory.
 */
const NOTHING_JUDGED = { input: "", at: 0, start: -1, sudo: false };
let judged = NOTHING_JUDGED;
const forgetJudged = (): void => {
  judged = NOTHING_JUDGED;
};

/**
 * Whether the command that ends at `at` (back to its line's start, real or escaped, a pipe, `;` or
 * `&`, within 512 characters) is `sudo -S …`: its standard input is then the password. Another
 * program's `-S` (`sudo pacman -S vim`) is not sudo's.
 */
function sudoReadsStdin(input: string, at: number): boolean {
  const known = judged.input === input && judged.at <= at && at - judged.at <= COMMAND_MAX;
  // start: where the command begins; -1 while no separator was seen and the text starts out of reach.
  let start = known ? judged.start : at <= COMMAND_MAX ? 0 : -1;
  for (let i = known ? judged.at : Math.max(0, at - COMMAND_MAX); i < at; i++) {
    const c = input.charCodeAt(i);
    // \n, |, ;, & and an escaped `\n`.
    if (c === 10 || c === 124 || c === 59 || c === 38 || (c === 110 && input.charCodeAt(i - 1) === 92)) start = i + 1;
  }
  let sudo: boolean;
  if (start === -1 || at - start > COMMAND_MAX) sudo = false;
  else if (known && start === judged.start) sudo = judged.sudo;
  else {
    const options = SUDO_OPTIONS.exec(input.slice(start, at))?.[1];
    sudo = options !== undefined && STDIN_OPTION.test(options);
  }
  judged = { input, at, start, sudo };
  return sudo;
}

/**
 * A password given to `sudo -S` as a here-string (`sudo -S cmd <<< 'pw'`, `sudo -S <<< pw cmd`) or
 * as a here-document's first line (`sudo -S cmd <<EOF` then `pw`). A `$VARIABLE` is no secret.
 */
const SUDO_HERE_STRING: Rule = {
  name: "sudo-here-string",
  needles: ["sudo"],
  pattern: new RegExp(String.raw`(<<<[ \t]*)${ARG}`, "g"),
  secret: (m, quoting) => (sudoReadsStdin(m.input, m.index) ? sudoHereValue(m, quoting) : null),
  scanned: forgetJudged,
};
const sudoHereValue = unquoted(2);

/**
 * Groups: 1 the operator and its delimiter line, 2 the delimiter's quote, 3 the password line (lines
 * may end in an escaped `\n`). The delimiter line holds no `<`, so no two readings overlap: linear.
 */
const SUDO_HERE_DOCUMENT: Rule = {
  name: "sudo-here-document",
  needles: ["sudo"],
  pattern: /(<<(?<!<<<)(?!<)-?[ \t]*(["']?)[A-Za-z_][A-Za-z0-9_]{0,32}\2(?:[^\n\\<]|\\(?!n)){0,512}(?:\n|\\n))((?:[^\n\r\\]|\\(?![nr])){3,512})/g,
  secret: (m) => {
    const [, head = "", , line = ""] = m;
    if (!sudoReadsStdin(m.input, m.index) || isPlaceholder(line.trim()) || /^\$\{?\w+\}?$/.test(line.trim())) return null;
    return [head.length, head.length + line.length];
  },
  scanned: forgetJudged,
};

export const SUDO_RULES: readonly Rule[] = [SUDO_HERE_STRING, SUDO_HERE_DOCUMENT];
