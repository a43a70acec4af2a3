// Session cookies outside a `Cookie:` header line (auth.ts reads those): a session id written as
// a bare `name=value`, and a cookie entry of a HAR file, a browser's cookie export or a test's
// setCookie call (`{"name": "sessionid", "value": "…"}`). A session cookie is a bearer credential.
import { isPlaceholder } from "./key-names.ts";
import { classChanges, looksRandom, REDACTED, type Finding, type Rule } from "./rule.ts";

/** Cookie names that carry a session or a credential. */
export const SESSION_COOKIE = /sess|sid|token|auth|jwt|remember|login|csrf|xsrf|key|secret|connect/i;

/** A cookie's value is a credential: under a session's name and 16 characters or more, or long and random under any name. */
export function cookieSecret(name: string, value: string): boolean {
  if (value.length < 16 || value.startsWith(REDACTED) || isPlaceholder(value)) return false;
  return SESSION_COOKIE.test(name) || (value.length >= 32 && looksRandom(value));
}

/**
 * The names web frameworks give their session cookie: Django's `sessionid`, PHP's `PHPSESSID`,
 * Java's `JSESSIONID` (`;jsessionid=` in a rewritten URL), Express's `connect.sid`, ASP.NET's,
 * Laravel's and CodeIgniter's. Written as they are: `sessionId` and `session_id` (a CLI's thread,
 * a log's correlation id) are no cookie's names, and pi-flow reads a harness's `session_id` back.
 */
const SESSION_COOKIE_NAMES = String.raw`sessionid|SESSIONID|PHPSESSID|phpsessid|JSESSIONID|jsessionid|connect\.sid|ASP\.NET_SessionId|ASPSESSIONID[A-Z]{8}|laravel_session|ci_session`;
export const SESSION_COOKIE_NAME = new RegExp(`^(?:${SESSION_COOKIE_NAMES})$`);

/** A session id's value: what a cookie holds, to a delimiter of a cookie header, a URL query or a quoted string. */
const COOKIE_VALUE = String.raw`[^;\s"'\x60,&<>\\]{16,4096}`;

/**
 * A framework's session cookie written as `name=value` (`curl -b sessionid=…`, a URL's
 * `;jsessionid=…`, a log line) or as a field (`"PHPSESSID": "…"`, `cookies={'sessionid': '…'}`).
 * Groups: 1 the name, its quotes and operator, 2 the value.
 */
const SESSION_ID: Rule = {
  name: "session-cookie",
  needles: ["sessionid", "sessid", "connect.sid", "_session"],
  pattern: new RegExp(
    String.raw`((?:${SESSION_COOKIE_NAMES})(?<=(?:^|[^A-Za-z0-9_.-]|\\[nrt])(?:${SESSION_COOKIE_NAMES}))["']?[ \t]*[:=][ \t]*["']?)(${COOKIE_VALUE})`,
    "g",
  ),
  secret: (m) => {
    const [, head = "", value = ""] = m;
    const name = /^[\w.]+/.exec(head)![0];
    return cookieSecret(name, value) && looksRandom(value) ? [head.length, head.length + value.length] : null;
  },
};

/**
 * Generic names a session id is kept under: `sid`, `session`, `session_id`, `session-id` (any
 * case), and as an HTTP header (`X-Session-Id:`). Not camelCase `sessionId`: as written in code it
 * is a CLI's thread or a log's correlation id.
 */
const GENERIC_SESSION_NAMES = String.raw`(?:x-)?(?:sid|session(?:[_-]id)?)`;
export const GENERIC_SESSION_NAME = new RegExp(`^(?:${GENERIC_SESSION_NAMES})$`, "i");

/**
 * Identifiers such names also hold, none a credential: a UUID (Claude's and Codex's `session_id`,
 * which pi-flow reads back), a Twilio resource SID (`SM` and 32 hex), a Windows SID (`S-1-5-21-…`).
 */
const SESSION_IDENTIFIER = /^(?:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|[A-Z]{2}[0-9a-f]{32}|S-\d{1,3}(?:-\d{1,12}){1,15})$/;

/**
 * A value under a generic session name is a session id when it looks generated, as a query
 * parameter's credential does (auth.ts): 16 characters or more, printable, at least four letters
 * and a digit, a change of character class at least every three characters (a name, a slug, a
 * path, an ISO time do not), and no identifier above. `session=1`, `sid=3`, `session: "main"` stay.
 */
export function genericSessionSecret(value: string): boolean {
  if (value.length < 16 || value.startsWith(REDACTED) || isPlaceholder(value) || SESSION_IDENTIFIER.test(value)) return false;
  if (!/^[\x21-\x7e]+$/.test(value) || /^[/~.]|:\/\//.test(value)) return false;
  return (value.match(/[A-Za-z]/g)?.length ?? 0) >= 4 && /\d/.test(value) && classChanges(value) * 3 >= value.length;
}

/**
 * A session id under a generic name (see GENERIC_SESSION_NAME): a query string's `?sid=…`, a
 * cookie set by script (`document.cookie = "session=…"`, `curl -b 'sid=…'`), JSON's
 * `"session_id": "…"`, an env's `SESSION=…`. Groups: 1 the name, its quotes and operator, 2 the value.
 */
const GENERIC_SESSION: Rule = {
  name: "generic-session-id",
  needles: ["sid", "session"],
  pattern: new RegExp(
    String.raw`((?:${GENERIC_SESSION_NAMES})(?<=(?:^|[^A-Za-z0-9_.-]|\\[nrt])(?:${GENERIC_SESSION_NAMES}))["']?[ \t]*[:=][ \t]*["']?)(${COOKIE_VALUE})`,
    "gi",
  ),
  secret: (m) => {
    const [, head = "", value = ""] = m;
    return genericSessionSecret(value) ? [head.length, head.length + value.length] : null;
  },
};

/** A cookie file's separator: a tab as written, or escaped in a JSON string. */
const COOKIE_TAB = String.raw`(?:\t|\\t)`;

/**
 * A line of a Netscape cookie file (curl's `-c cookies.txt`, yt-dlp's and browsers' exports):
 * domain, subdomains flag, path, secure flag, expiry, name and value, tab-separated; `#HttpOnly_`
 * may open the domain. The value is judged as a cookie's (see cookieSecret). Groups: 1 up to the
 * value, 2 the name, 3 the value.
 */
const COOKIE_FILE_LINE: Rule = {
  name: "cookie-file-line",
  needles: ["\ttrue\t", "\tfalse\t", "\\ttrue\\t", "\\tfalse\\t"],
  pattern: new RegExp(String.raw`(${COOKIE_TAB}(?:TRUE|FALSE)${COOKIE_TAB}[^\t\n\\]{1,1024}${COOKIE_TAB}(?:TRUE|FALSE)${COOKIE_TAB}\d{1,20}${COOKIE_TAB}([^\t\n\\]{1,256})${COOKIE_TAB})([^\t\r\n\\"]{1,4096})`, "g"),
  secret: (m) => {
    const [, head = "", name = "", value = ""] = m;
    return cookieSecret(name, value) ? [head.length, head.length + value.length] : null;
  },
};

/** How far back the list or call a cookie entry sits in is looked for. */
const ENTRY_CONTEXT_MAX = 16 * 1024;
/** What opens a list or object of cookies: `"cookies": [`, `setCookie(`, `add_cookie(`, `context.addCookies([`. */
const COOKIES_OPENER = /cookies?["']?[ \t]*[:=][ \t]*$|cookies?[ \t]*\([ \t]*$/i;
/** Fields only a cookie has beside its name and value (a browser's export, Puppeteer's and Playwright's cookies). */
export const COOKIE_ATTRIBUTE = /^(?:httpOnly|hostOnly|sameSite|expirationDate|domain)$/i;
const COOKIE_ATTRIBUTE_FIELD = /["']?(?:httpOnly|hostOnly|sameSite|expirationDate|domain)["']?[ \t]*[:=]/i;

/**
 * Whether the object whose `name` field starts at `at` and whose value ends at `end` is a cookie:
 * it has a cookie's attributes (`domain`, `httpOnly`…), or is an item of a list under `cookies` (a
 * HAR entry's request or response, Playwright's storage state), or the argument of a call that
 * sets one. Read back over the brackets, skipping balanced ones.
 */
function isCookieEntry(input: string, at: number, end: number): boolean {
  let depth = 0;
  let object = true;
  for (let i = at - 1; i >= Math.max(0, at - ENTRY_CONTEXT_MAX); i--) {
    const c = input[i];
    if (c === "]" || c === "}") depth++;
    else if (c === "[" || c === "{") {
      if (depth > 0) {
        depth--;
        continue;
      }
      if (object && c === "{") {
        object = false;
        const close = input.indexOf("}", end);
        if (COOKIE_ATTRIBUTE_FIELD.test(input.slice(i, close === -1 ? Math.min(input.length, end + 4096) : Math.min(close, end + 4096)))) return true;
      }
      if (COOKIES_OPENER.test(input.slice(Math.max(0, i - 64), i).trimEnd())) return true;
      if (c === "[") return false;
    }
  }
  return false;
}

/**
 * A name/value entry (`{"name": "sessionid", "value": "…"}`): a HAR file's cookies and headers, a
 * browser's cookie export (its other fields may sit between), Puppeteer's and Selenium's cookies.
 * An `Authorization` header's value loses its credential (after its scheme, or whole when long and
 * random), a `Cookie` or `Set-Cookie` header's its session cookies, as the header lines do; a
 * cookie's value goes when the entry is a cookie (see isCookieEntry) or the name a framework's
 * session cookie's. Groups: 1 up to the name, 2 its quote, 3 the name, 4 up to the value, 5 its quote, 6 the value.
 */
const NAME_VALUE_ENTRY: Rule = {
  name: "name-value-entry",
  needles: ["cookie", "sessionid", "sessid", "connect.sid", "_session", "authorization"],
  pattern: /(name(?<=(?:^|[^A-Za-z0-9_-]|\\[nrt])["']?name)["']?[ \t]*[:=][ \t]*)(["'])([^"'\n\\]{1,128})\2([^{}]{0,512}?["']?value["']?[ \t]*[:=][ \t]*)(["'])([^"'\n\\]{1,4096})\5/g,
  findings: (m) => {
    const [, head = "", quote = "", name = "", between = "", , value = ""] = m;
    const valueAt = head.length + 2 * quote.length + name.length + between.length + 1;
    if (/^(?:proxy-)?authorization$/i.test(name)) {
      // As the header line is judged (auth.ts): the credential after its scheme, or a long random value whole.
      const schemed = /^[A-Za-z][\w-]{1,31}[ \t]+(?=\S{8,}$)/.exec(value);
      if (schemed) return [{ start: valueAt + schemed[0].length, end: valueAt + value.length }];
      return value.length >= 16 && looksRandom(value) ? [{ start: valueAt, end: valueAt + value.length }] : [];
    }
    if (/^(?:set-)?cookie$/i.test(name)) {
      const found: Finding[] = [];
      for (const pair of value.matchAll(/(?:^|;)[ \t]*([^=;\s]{1,128})=([^;]*)/g)) {
        const [whole, cookie = "", content = ""] = pair;
        const start = valueAt + pair.index + whole.length - content.length;
        if (cookieSecret(cookie, content.trimEnd())) found.push({ start, end: start + content.trimEnd().length });
      }
      return found;
    }
    const secret = cookieSecret(name, value) && (SESSION_COOKIE_NAME.test(name) || isCookieEntry(m.input, m.index, m.index + m[0].length));
    return secret ? [{ start: valueAt, end: valueAt + value.length }] : [];
  },
};

export const COOKIE_RULES: readonly Rule[] = [SESSION_ID, GENERIC_SESSION, COOKIE_FILE_LINE, NAME_VALUE_ENTRY];
