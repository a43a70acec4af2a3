import { isPlaceholder } from "./key-names.ts";
import type { Rule } from "./rule.ts";

/**
 * Passwords passed by position, with no name beside them: the second argument of a constructor
 * that takes a user and a password (`HTTPBasicAuth('admin', '…')`, requests' `auth=('admin', '…')`,
 * .NET's `NetworkCredential("admin", "…")`, Apache's `UsernamePasswordCredentials`, a client's
 * `.login('user', '…')`: smtplib, ftplib, imaplib), and the string
 * PowerShell's `ConvertTo-SecureString '…' -AsPlainText` turns into a credential, and MongoDB's
 * `pwd` in its user calls. Only string
 * literals: a variable (`auth=(user, password)`) is no secret.
 */

const USER_PASSWORD_CALLS = "HTTPBasicAuth|HTTPDigestAuth|HTTPProxyAuth|BasicAuth|NetworkCredential|UsernamePasswordCredentials|PasswordAuthentication|auth[ \\t]*=[ \\t]*|\\.login";
/** A string literal argument. */
const LITERAL = String.raw`("(?:[^"\\\n]|\\.){1,256}"|'(?:[^'\\\n]|\\.){1,256}')`;

/** Group 2 is the quoted password; the span leaves its quotes out. */
function quotedPassword(m: RegExpExecArray): readonly [number, number] | null {
  const value = m[2] ?? "";
  const inner = value.slice(1, -1);
  if (inner.length < 3 || isPlaceholder(inner)) return null;
  const start = (m[1] ?? "").length + 1;
  return [start, start + inner.length];
}

/** MongoDB's user calls: `pwd` is the password's field there, where alone it is the shell's working directory. */
const MONGO_USER_CALLS = "createUser|updateUser|auth";

/** A client built from a wallet's private key: ethers' `Wallet`, viem's `privateKeyToAccount`, web3.py's `from_key`. */
const WALLET_CALLS = "Wallet|privateKeyToAccount|from_key|fromPrivateKey|SigningKey";

export const CREDENTIAL_CALL_RULES: readonly Rule[] = [
  {
    // `new ethers.Wallet("0x<64 hex>")`: 32 bytes given to a wallet are its private key (a hash is given to no wallet).
    name: "wallet-private-key",
    needles: ["wallet", "privateKeyToAccount", "from_key", "fromPrivateKey", "SigningKey"],
    pattern: new RegExp(String.raw`((?:${WALLET_CALLS})\([ \t]*(["']))((?:0x)?[0-9a-fA-F]{64})(?=\2)`, "g"),
    secret: (m) => [(m[1] ?? "").length, (m[1] ?? "").length + (m[3] ?? "").length],
  },
  {
    // Hardhat's and Foundry's network `accounts: ["0x<64 hex>", …]`: each is a private key (an address is 40 hex digits).
    name: "accounts-private-keys",
    needles: ["accounts"],
    pattern: /0x(?<=accounts["']?[ \t]*[:=][ \t]*\[[^\]\n]{0,1024}["']0x)[0-9a-fA-F]{64}(?=["'])/g,
  },
  {
    // `db.createUser({ user: "app", pwd: "…" })`, `db.updateUser("app", { pwd: "…" })`: a quoted
    // `pwd` within the call's first 256 characters (`passwordPrompt()` is no literal).
    name: "mongo-user-pwd",
    needles: ["pwd"],
    pattern: new RegExp(String.raw`((?:${MONGO_USER_CALLS})\([^)]{0,256}?\bpwd["']?[ \t]*:[ \t]*)${LITERAL}`, "g"),
    secret: quotedPassword,
  },
  {
    name: "user-password-call",
    needles: ["auth", "credential", ".login"],
    pattern: new RegExp(String.raw`((?:${USER_PASSWORD_CALLS})\([ \t]*${LITERAL.replace("(", "(?:")}[ \t]*,[ \t]*)${LITERAL}`, "g"),
    secret: quotedPassword,
  },
  {
    name: "powershell-secure-string",
    needles: ["ConvertTo-SecureString"],
    pattern: new RegExp(String.raw`(ConvertTo-SecureString[ \t]+(?:-String[ \t]+)?)${LITERAL}(?=[^\n|;]{0,64}-AsPlainText)`, "gi"),
    secret: quotedPassword,
  },
];
