import { isPlaceholder } from "./key-names.ts";
import type { Rule } from "./rule.ts";

/**
 * Passwords in SQL statements: `CREATE USER … WITH PASSWORD '…'` and `CREATE ROLE … LOGIN
 * PASSWORD '…'` (PostgreSQL), `IDENTIFIED [WITH plugin] BY '…'` (MySQL, Oracle, where the
 * password may be unquoted), `SET PASSWORD … = '…'` or `PASSWORD('…')`, and SQL Server's
 * `CREATE LOGIN … WITH PASSWORD = N'…'`. Keywords in any case; the quotes stay. Each pattern
 * starts at its keyword and reads the statement back with a lookbehind, as `prefixed` does.
 */

/** A quoted password: `'…'` (a quote written twice inside), `"…"`, or SQL Server's `N'…'`. Group 2. */
const QUOTED = String.raw`N?('(?:[^'\\\n]|''|\\.){1,256}'|"(?:[^"\\\n]|\\.){1,256}")`;

/** The password in group 2 (quoted) or 3 (bare), as [start, end) of the match, quotes left out. */
function password(m: RegExpExecArray): readonly [number, number] | null {
  const [whole, , quoted, bare] = m;
  const value = quoted !== undefined ? quoted.slice(1, -1) : (bare ?? "");
  if (value.length < 3 || isPlaceholder(value) || /^\$\{?\w+\}?$|^:/.test(value)) return null;
  const start = whole.length - (quoted ?? value).length + (quoted !== undefined ? 1 : 0);
  return [start, start + value.length];
}

export const SQL_RULES: readonly Rule[] = [
  {
    name: "sql-with-password",
    needles: ["password"],
    pattern: new RegExp(
      String.raw`(PASSWORD(?<=(?:\b(?:WITH|LOGIN|ENCRYPTED|UNENCRYPTED)[ \t]+|\bUSER[ \t]+[^\s;]{1,128}[ \t]+)PASSWORD)[ \t]*(?:=[ \t]*)?)${QUOTED}`,
      "gi",
    ),
    secret: password,
  },
  {
    name: "sql-set-password",
    needles: ["password"],
    pattern: new RegExp(String.raw`(PASSWORD(?<=\bSET[ \t]+PASSWORD)\b[^;\n=]{0,160}=[ \t]*(?:PASSWORD[ \t]*\([ \t]*)?)${QUOTED}`, "gi"),
    secret: password,
  },
  {
    // Oracle's password may be unquoted (`IDENTIFIED BY tiger9`): a bare one needs a digit, so
    // prose ("identified by the team") and `IDENTIFIED BY VALUES '…'` (a hash) stay.
    name: "sql-identified-by",
    needles: ["identified"],
    pattern: new RegExp(String.raw`(BY(?<=\bIDENTIFIED(?:[ \t]+WITH[ \t]+\w{1,64})?[ \t]+BY)[ \t]+)(?:${QUOTED}|([^\s;'",()]{3,128}))`, "gi"),
    secret: (m) => (m[3] !== undefined && !/\d/.test(m[3]) ? null : password(m)),
  },
];
