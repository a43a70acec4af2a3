import { isSecretKeyName, judgeStoreValue, judgeValue } from "./key-names.ts";
import type { Finding, Rule } from "./rule.ts";

/**
 * Vault's table output (`vault kv get`, `vault read`): a `Key  Value` header, a `---  -----` rule,
 * then one row a line, the key and its value apart by two spaces or more. Under a kv secret's
 * `=== Data ===` heading every value is one of the secret's, whatever its key (judged as a value
 * in a store of secrets: key-stores.ts); elsewhere (`vault read database/creds/…`, the metadata
 * table) a row counts when its key is a secret's name (`password`), judged as `password: …`.
 */

/** A line break, real or escaped in a JSON string. */
const BREAK = String.raw`(?:\r?\n|\\r\\n|\\n)`;
/** One row: group 1 the key, group 2 the value, to the line's end. */
const ROW = new RegExp(String.raw`${BREAK}([A-Za-z0-9_.-]{1,128})[ \t]{2,}((?:[^\s\\]|[ \t]+(?=[^\s\\])|\\(?![nr])){1,1024})[ \t]*(?=${BREAK}|$)`, "y");
const MAX_ROWS = 256;

const VAULT_TABLE: Rule = {
  name: "vault-table",
  needles: ["Key"],
  // Group 1: the kv data heading above the header, when there is one.
  pattern: new RegExp(String.raw`Key(?<=(?:^|${BREAK})(=+ Data =+${BREAK})?Key)[ \t]+Value[ \t]*${BREAK}---[ \t]+-----[ \t]*`, "g"),
  findings: (m) => {
    const data = m[1] !== undefined;
    const found: Finding[] = [];
    let at = m.index + m[0].length;
    for (let rows = 0; rows < MAX_ROWS; rows++) {
      ROW.lastIndex = at;
      const row = ROW.exec(m.input);
      if (row === null) break;
      const [whole, key = "", value = ""] = row;
      const secret = data ? judgeStoreValue("secrets", value) : isSecretKeyName(key) && judgeValue({ key, op: ":", spaced: true, value, endsLine: true });
      if (secret) {
        const start = at + whole.length - value.length - m.index;
        found.push({ start, end: start + value.length });
      }
      at += whole.length;
    }
    VAULT_TABLE.pattern.lastIndex = Math.max(VAULT_TABLE.pattern.lastIndex, at);
    return found;
  },
};

export const VAULT_TABLE_RULES: readonly Rule[] = [VAULT_TABLE];
