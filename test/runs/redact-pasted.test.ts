import { describe, expect, it } from "vitest";
import { REDACTED, redactText, redactValue } from "../../src/runs/index.ts";
import { alnum, expectGone, expectKept } from "./pasted.ts";

/**
 * Secrets in the forms people paste them, by the shape of their lines: a comment after a password,
 * a separator or filler inside or before a secret, a value on the line after its name, a JWT split
 * over lines. Each must go whole (no 8-character piece of it survives), as written and inside a
 * JSON string, and the text named in `keep` must stay readable.
 */

describe("a password followed by a comment on its line", () => {
  it("goes whole in YAML, .env and INI files, and the comment stays", () => {
    const cases: [string, string, string][] = [
      ["password: correct horse battery staple  # rotated in May", "horse battery staple", "# rotated in May"],
      ["db:\n  password: correcthorse # rotated in May\n  host: db", "correcthorse", "# rotated in May"],
      ["db:\n  password: sunshine  # rotated in May\n  host: db", "sunshine", "host: db"],
      ["NODE_ENV=production\nSMTP_PASSWORD=correct horse battery # rotated\nSMTP_HOST=mail", "horse battery", "# rotated"],
      ["[client]\nuser = app\npassword = correct horse battery ; rotated in May\nhost = db", "horse battery", "; rotated in May"],
      ["[client]\npassword = correct horse battery # rotated in May\n", "horse battery", "# rotated in May"],
    ];
    for (const [text, secret, comment] of cases) expectGone(text, secret, [comment]);
  });

  it("leaves prose and a key's description alone", () => {
    expectKept("The password: please # rotate it");
    expectKept("password: required  # the field is mandatory");
  });
});

describe("a Unicode line or paragraph separator inside a secret", () => {
  it("does not split it: the part after the separator goes too", () => {
    for (const separator of ["\u2028", "\u2029", "\u0085"]) {
      const token = `ghp_${alnum(18)}${separator}${alnum(36).slice(18)}`;
      expectGone(`pushed with ${token} from CI`, token.slice(-12));
      expectGone(`pushed with ${token} from CI`, token.slice(0, 14));
      const password = `Tr0ub4dor${separator}&3-horse-staple`;
      expectGone(`DB_PASSWORD=${password}\nNEXT=1`, "horse-staple", ["NEXT=1"]);
    }
  });

  it("leaves text that only uses them as line breaks alone", () => {
    expectKept("first paragraph\u2029second paragraph\u2028third line: token count 12");
  });

  it("keeps the next line when a secret ends right before one used as a line break", () => {
    // NEL (U+0085, "next line") is a line break as the separators are, not part of the value before it.
    for (const separator of ["\u2028", "\u2029", "\u0085"]) {
      expectGone(`password=hunter2-Secret!${separator}next line here`, "hunter2-Secret!", ["next line here"]);
      expectGone(`token ghp_${alnum(36)}${separator}Next line`, alnum(36), ["Next line"]);
      expectGone(`api_key=sk-${alnum(40)}${separator}Next: the deploy`, alnum(40), ["Next: the deploy"]);
    }
    // A Hangul filler shows as a space: the word after a token stays.
    expectGone(`token ghp_${alnum(36)}\u3164Next line`, alnum(36), ["Next line"]);
  });

  it("ends a password phrase at one: the whole phrase before it goes, and the next line stays", () => {
    for (const separator of ["\u2028", "\u2029", "\u0085"]) {
      expectGone(`[client]\npassword = correct horse battery${separator}[section]`, "horse battery", ["[section]"]);
      expectGone(`db:\n  password: correct horse battery${separator}  host: db`, "horse battery", ["host: db"]);
    }
  });
});

describe("a Hangul filler, NEL or separator between a name and its secret", () => {
  it("reads as the space it may show as (a terminal shows a separator as nothing or a blank): the secret after it goes", () => {
    for (const blank of ["\u3164", "\u115f", "\u1160", "\uffa0", "\u0085", "\u2028", "\u2029"]) {
      expectGone(`deploy --password${blank}hunter2-Secret! --region eu`, "hunter2-Secret!", ["--region eu"]);
      expectGone(`mongosh -u admin -p${blank}hunter2-Secret! db`, "hunter2-Secret!");
    }
  });
});

describe("a line or paragraph separator written escaped in JSON (six characters, as json.dumps writes it)", () => {
  const shown = (line: string): string => (JSON.parse(redactText(line).text) as { out: string }).out;

  it("is cut at as the character itself is: the next line stays", () => {
    for (const escaped of ["\\u2028", "\\u2029", "\\u0085"]) {
      const password = shown(`{"out": "password=hunter2-Secret!${escaped}next line here"}`);
      expect(password, escaped).not.toContain("hunter2");
      expect(password, escaped).toContain("next line here");
      const token = shown(`{"out": "token ghp_${alnum(36)}${escaped}Next: the deploy"}`);
      expect(token, escaped).not.toContain(alnum(36).slice(0, 8));
      expect(token, escaped).toContain("Next: the deploy");
    }
  });

  it("still joins a secret it splits", () => {
    for (const escaped of ["\\u2028", "\\u0085", "\\u3164"]) {
      const token = shown(`{"out": "pushed ghp_${alnum(18)}${escaped}${alnum(36).slice(18)} from CI"}`);
      expect(token, escaped).toBe(`pushed ${REDACTED} from CI`);
    }
    expect(shown(`{"out": "deploy --password\\u3164hunter2-Secret! now"}`)).not.toContain("hunter2");
  });
});

describe("a secret-named key with its value alone on the next line", () => {
  it("goes: a YAML plain scalar written there, or a JSON value a formatter wrapped", () => {
    expectGone("db:\n  password:\n    hunter2-Secret!\n  host: db", "hunter2-Secret!", ["host: db"]);
    expectGone('{\n  "password":\n    "hunter2-Secret!",\n  "user": "app"\n}', "hunter2-Secret!", ['"user": "app"']);
  });

  it("leaves a label with a description under it, a map and a list alone", () => {
    expectKept("Password:\n  Must be at least 12 characters long.");
    expectKept("password:\n  required");
    expectKept("credentials:\n  user: app\n  file: /etc/app/creds");
  });
});

describe("a JWT split across lines", () => {
  const header = "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9";
  const payload = "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4iLCJpYXQiOjE1MTYyMzkwMjJ9";
  const signature = `${alnum(40)}_${alnum(45)}`;
  const jwt = `${header}.${payload}.${signature}`;
  it("goes whole when broken after its dots or wrapped at a fixed width, and the next line stays", () => {
    const wrapped = jwt.match(/.{1,64}/g)!;
    const cases = [
      `token:\n${header}.\n${payload}.\n${signature}\nNEXT=1`,
      `Authorization token (wrapped by the terminal):\n${wrapped.join("\n")}\nNEXT=1`,
      `id_token: |\n  ${wrapped.join("\n  ")}\nNEXT=1`,
      `token:\r\n${header}.\r\n${payload}.\r\n${signature}\r\nNEXT=1`,
    ];
    for (const text of cases) {
      expectGone(text, signature, ["NEXT=1"]);
      expectGone(text, payload.slice(16));
    }
  });

  it("leaves a base64 line of JSON that is no token alone", () => {
    expectKept(`payload:\n${payload}\nnext line`);
    expectKept(`${header}.\nnot a token at all`);
    const text = `token:\n${header}.\n${payload}.\n${signature}\nNEXT\n`;
    expect(redactText(text).text).toBe("token:\n[REDACTED]\nNEXT\n");
  });
});

describe("a password or key under a bare name, in the configs users paste", () => {
  const pw = `Tr0ub4dor-${alnum(6)}`;
  const key = alnum(28);
  it("goes: pwd and key in YAML, INI and JSON, docker-compose env, a Kubernetes Secret's stringData, .netrc, .pgpass", () => {
    expectGone(`db:\n  user: report\n  pwd: ${pw}\n  host: db.internal`, pw, ["user: report", "host: db.internal"]);
    expectGone(`{"uid": "report", "pwd": "${pw}"}`, pw, ['"uid": "report"']);
    expectGone(`stripe:\n  key: ${key}\n  currency: eur`, key, ["currency: eur"]);
    expectGone(`[maps]\nkey = ${key}\nregion = eu`, key, ["region = eu"]);
    expectGone(`{"key": "${key}", "region": "eu"}`, key, ['"region": "eu"']);
    expectGone(`services:\n  db:\n    environment:\n      - POSTGRES_PASSWORD=${pw}\n      MYSQL_ROOT_PASSWORD: ${pw}`, pw);
    expectGone(`apiVersion: v1\nkind: Secret\nstringData:\n  username: admin\n  passwd: ${pw}`, pw);
    expectGone(`machine db.internal\n  login report\n  password ${pw}`, pw, ["login report"]);
    expectGone(`db.internal:5432:app:report:${pw}\n`, pw, ["db.internal:5432:app:report:"]);
    expect(redactValue({ uid: "report", pwd: pw }).value).toEqual({ uid: "report", pwd: REDACTED });
  });

  it("stays when pwd is the working directory or a word, and key names a thing", () => {
    for (const text of [
      "PWD=/home/dev/app\nOLDPWD=/home/dev",
      "pwd: /srv/app",
      '{"pwd": "C:\\\\Users\\\\dev", "exitCode": 0}',
      "pwd: prints the working directory",
      "pwd=$(pwd)",
      "tolerations:\n  - key: node-role.kubernetes.io/control-plane\n    operator: Exists",
      "    key: npm-${{ hashFiles('package-lock.json') }}",
      "key: uploads/2024/report-Q3.pdf\nkey: user_id\nkey: MyVeryLongServiceName2FactoryBuilder",
    ]) {
      expectKept(text);
    }
    expect(redactValue({ pwd: "/home/dev", key: "user_id" }).changed).toBe(false);
  });

  it("goes when generated, short as it may be: nearly every 16-character key of letters and digits, and hex", () => {
    // A fixed sequence (mulberry32), so the count is the same every run.
    let seed = 20261204;
    const next = (): number => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
    };
    const generated = (alphabet: string) => Array.from({ length: 16 }, () => alphabet[Math.floor(next() * alphabet.length)]).join("");
    const missed = (alphabet: string) => {
      let kept = 0;
      for (let i = 0; i < 500; i++) {
        const text = `key: ${generated(alphabet)}`;
        if (redactText(text).text === text) kept++;
      }
      return kept / 500;
    };
    // Random letter runs are short and rarely read as words; one in ten was taken for an identifier.
    expect(missed("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")).toBeLessThan(0.06);
    expect(missed("0123456789abcdef")).toBeLessThan(0.08);
  });
});

describe("a secret written as the default of a variable that should hold it", () => {
  const pw = `Hunter2-${alnum(8)}`;
  it("goes: Spring's ${NAME:default}, the shell's and Compose's ${NAME:-default}, code's env fallbacks, an env setter", () => {
    for (const text of [
      `spring.datasource.password=\${DB_PASSWORD:${pw}}`,
      `services:\n  db:\n    environment:\n      POSTGRES_PASSWORD: \${POSTGRES_PASSWORD:-${pw}}\n      POSTGRES_USER: app`,
      `DB_PASSWORD=\${DB_PASSWORD-${pw}}`,
      `password: \${DB_PW:${pw}}`,
      `const password = process.env.DB_PASSWORD ?? "${pw}";`,
      `const token = process.env.API_TOKEN || '${pw}'`,
      `password = os.environ.get("DB_PASSWORD", "${pw}")`,
      `db_password = ENV.fetch("DB_PASSWORD", "${pw}")`,
      `[Environment]::SetEnvironmentVariable('DB_PASSWORD', '${pw}', 'User')`,
    ]) {
      expectGone(text, pw);
    }
    expect(redactText(`POSTGRES_PASSWORD: \${POSTGRES_PASSWORD:-${pw}}`).text).toBe(`POSTGRES_PASSWORD: \${POSTGRES_PASSWORD:-${REDACTED}}`);
  });

  it("stays when there is no default, it is another variable, an error message, or the variable names no secret", () => {
    for (const text of [
      "password: ${DB_PASSWORD}",
      "POSTGRES_PASSWORD: ${POSTGRES_PASSWORD:-}",
      "password: ${DB_PASSWORD:${VAULT_DB_PASSWORD}}",
      "API_TOKEN=${API_TOKEN:?API_TOKEN must be set}",
      "LOG_LEVEL=${LOG_LEVEL:-debug2}\nport: ${PORT:8080}",
      "const password = process.env.DB_PASSWORD ?? readSecret();",
      "const host = process.env.DB_HOST || 'localhost-2'",
    ]) {
      expectKept(text);
    }
  });
});

describe("a secret's name with a suffix after its secret word", () => {
  const pw = `q9Zt4Lw8-${alnum(6)}`;
  it("goes when the suffix names an environment or a version (_PROD, _STAGING, _2, _OLD), and under a camelCase pass (adminPass)", () => {
    for (const text of [`DB_PASSWORD_PROD=${pw}`, `API_KEY_STAGING=${pw}`, `PASSWORD_2=${pw}`, `stripe_secret_live: ${pw}`, `GITHUB_TOKEN_OLD=${pw}`, `adminPass: ${pw}`, `{"rootPass": "${pw}"}`]) {
      expectGone(text, pw);
    }
    expect(redactValue({ DB_PASSWORD_PROD: pw, dbPass: pw }).value).toEqual({ DB_PASSWORD_PROD: REDACTED, dbPass: REDACTED });
  });

  it("goes when the suffix names the encoding its value is written in (_B64, Base64, _ENCODED, _hex): decoded, it is the secret", () => {
    const encoded = Buffer.from(pw).toString("base64");
    const hexed = Buffer.from(pw).toString("hex");
    for (const text of [`DB_PASSWORD_B64=${encoded}`, `API_KEY_BASE64: ${encoded}`, `{"clientSecretBase64": "${encoded}"}`, `TOKEN_ENCODED=${encoded}`]) expectGone(text, encoded);
    expectGone(`signing_secret_hex = ${hexed}`, hexed);
    expect(redactValue({ tokenBase64: encoded }).value).toEqual({ tokenBase64: REDACTED });
    expectKept("token_hex = secrets.token_hex(16)");
  });

  it("stays when the suffix makes it another thing: a hash, an ID, a count, a policy; a compiler's pass", () => {
    for (const text of ["password_hash: $2b$12$abc", "api_key_id=42", "TOKEN_COUNT=1234", "PASSWORD_MIN_LENGTH=12", "token_type: Bearer", "bypass_test: enabled", "firstPass: true\nrenderPass: shadowMap"]) {
      expectKept(text);
    }
  });
});

describe("a secret-named key in a dump, a hash or a table", () => {
  const pw = `Hunter2-${alnum(6)}`;
  it("goes: PHP's var_dump, Ruby's and Perl's =>, a Markdown table's row", () => {
    expectGone(`array(2) {\n  ["user"]=>\n  string(3) "app"\n  ["password"]=>\n  string(15) "${pw}"\n}`, pw, ['["user"]=>\n  string(3) "app"']);
    expectGone(`{ :user => "app", :password => "${pw}" }`, pw, [':user => "app"']);
    expectGone(`my %db = (user => 'app', password => '${pw}');`, pw, ["user => 'app'"]);
    expectGone(`| Name | Value |\n|---|---|\n| DB_USER | app |\n| DB_PASSWORD | ${pw} |`, pw, ["| DB_USER | app |"]);
    expectGone(`| api_key | \`${pw}\` |`, pw);
  });

  it("stays when the row describes a secret, an arrow is code, or the dump holds no secret", () => {
    for (const text of [
      "| password | string | required |\n| token | The API token, from the settings page | optional |\n| api_key | `${API_KEY}` | |",
      "tokens.map(token => token.trim())\nconst f = password => password.length > 8;",
      `["password"]=>\n  NULL`,
    ]) {
      expectKept(text);
    }
  });
});

describe("a password's name in another language", () => {
  const pw = `Sonne-${alnum(6)}`;
  it("names a secret: German, Dutch, Portuguese, Spanish, French, Swedish, Finnish, Polish", () => {
    for (const name of ["Passwort", "DB_KENNWORT", "wachtwoord", "senha", "contraseña", "contrasena", "mot_de_passe", "lösenord", "salasana", "hasło"]) {
      expectGone(`${name}: ${pw}\nhost: db`, pw, ["host: db"]);
      expect(redactValue({ [name]: pw }).value, name).toEqual({ [name]: REDACTED });
    }
  });

  it("leaves words that only hold one alone", () => {
    for (const text of ["Wortschatz: groß", "senhas_count: 3", "hashlookup: enabled"]) expectKept(text);
  });
});

describe("a secret split by the shell's quoting", () => {
  const token = `ghp_${alnum(36)}`;
  it("goes whole when its pieces are quoted apart, an empty quote sits inside it or its line is continued, as the shell joins them", () => {
    expectGone(`export API_TOKEN='${token.slice(0, 10)}'"${token.slice(10)}"`, token.slice(10));
    expectGone(`export API_TOKEN=${token.slice(0, 10)}"${token.slice(10)}"`, token.slice(10));
    expectGone(`DB_PASSWORD=q9Zt''4Lw8Nc2Vb6`, "4Lw8Nc2Vb6");
    expect(redactText(`DB_PASSWORD=q9Zt''4Lw8Nc2Vb6 ./run.sh`).text).toBe(`DB_PASSWORD=${REDACTED} ./run.sh`);
    // A backslash before a line break continues the word on the next line.
    expectGone(`export GITHUB_TOKEN=${token.slice(0, 12)}\\\n${token.slice(12)}\nnext`, token.slice(12));
    expect(redactText(`export GITHUB_TOKEN=${token.slice(0, 12)}\\\n${token.slice(12)}\nnext`).text).toBe(`export GITHUB_TOKEN=${REDACTED}\nnext`);
  });

  it("stays for empty values and for JSON around an assignment", () => {
    for (const text of [`PASSWORD="" ./run.sh`, `password='' psql`, `{"a":"API_TOKEN=","b":"x"}`, `["TOKEN=$(cat token.txt)", "--verbose"]`]) expectKept(text);
  });
});

describe("a secret split across string literals the language joins without a +", () => {
  const token = `ghp_${alnum(36)}`;
  it("goes from each literal: Python's parenthesised lines, literals side by side in Python and C", () => {
    expectGone(`GITHUB_TOKEN = ("${token.slice(0, 12)}"\n    "${token.slice(12)}")`, token.slice(12));
    expectGone(`token = "${token.slice(0, 12)}" "${token.slice(12)}"`, token.slice(12));
    expectGone(`const char *api_key = "${token.slice(0, 12)}" "${token.slice(12)}";`, token.slice(12));
    expectGone(`client = Github("${token.slice(0, 12)}" '${token.slice(12)}')`, token.slice(12));
  });

  it("stays for literals that join to no secret: a shell's arguments, a markdown list of code spans", () => {
    for (const text of [`printf "%s" "ghp_ is GitHub's prefix"`, "use `ghp_` `tokens` here", `msg = ("first part of a long message, "\n       "and its second part")`]) expectKept(text);
  });
});
