import { describe, expect, it } from "vitest";
import { REDACTED, redactText, redactValue } from "../../src/runs/index.ts";

/**
 * Secrets in the forms people paste them: config lines with comments, tool outputs, client
 * constructors, URLs. Each must go whole (no 8-character piece of it survives), as written and
 * inside a JSON string, and the text named in `keep` must stay readable.
 */

// Built from pieces so the source file itself does not look like it leaks credentials.
const alnum = (n: number) => "aB3dE5gH7jK9mN1pQ2rS4tU6vW8xY0z".repeat(8).slice(0, n);
const hex = (n: number) => "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08".repeat(2).slice(0, n);

function leaks(redacted: string, secret: string): boolean {
  const width = Math.min(8, secret.length);
  for (let at = 0; at + width <= secret.length; at++) if (redacted.includes(secret.slice(at, at + width))) return true;
  return false;
}

function expectGone(text: string, secret: string, keep: readonly string[] = []): void {
  const plain = redactText(text).text;
  expect(leaks(plain, secret), `${JSON.stringify(text)} -> ${JSON.stringify(plain)}`).toBe(false);
  for (const part of keep) expect(plain, JSON.stringify(text)).toContain(part);
  const inJson = redactText(JSON.stringify({ content: text })).text;
  const back = (JSON.parse(inJson) as { content: string }).content;
  expect(leaks(back, secret), `in JSON: ${inJson}`).toBe(false);
  for (const part of keep) expect(back).toContain(part);
}

function expectKept(text: string): void {
  expect(redactText(text).text).toBe(text);
}

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

describe("AWS's documentation key pair (AKIAIOSFODNN7EXAMPLE, wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY)", () => {
  const id = "AKIAIOSFODNN7EXAMPLE";
  const key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";

  it("goes whole in text output, where the key has no label: beside its ID the secret goes too", () => {
    expectGone(`ACCESSKEY\t${id}\t2015-03-09T18:39:23.411Z\t${key}\tActive\tBob`, key, ["\tActive\tBob"]);
    expectGone(`ACCESSKEY\t${id}\t2015-03-09T18:39:23.411Z\t${key}\tActive\tBob`, id);
    expectGone(`created ${key} for ${id} just now`, key, ["just now"]);
    expectGone(`id: ${id} (rotated)\nother line\n${id} ${key}`, key);
  });

  it("leaves a 40-character run with no key ID on its line to the randomness test", () => {
    const path = "src/runs/redact/Controls2ViewSpacedGapsAb".slice(0, 40);
    expect(redactText(`${id}\n${path}`).text).toBe(`[REDACTED]\n${path}`);
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

describe("a password handed to sudo -S on its standard input", () => {
  it("goes in a here-string, a here-document, and a pipe to sudo --stdin", () => {
    const cases: [string, readonly string[]][] = [
      ["sudo -S <<< 'Tr0ub4dor&3xy' apt update", ["sudo -S <<< '", "' apt update"]],
      ["sudo -S apt update <<< Tr0ub4dor-3xy && echo done", ["sudo -S apt update <<< ", " && echo done"]],
      ['sudo -u root -kS systemctl restart api <<<"Tr0ub4dor-3xy"', ["systemctl restart api"]],
      ["sudo --stdin -v <<< 'Tr0ub4dor-3xy'", ["sudo --stdin -v <<< '"]],
      ["sudo -S apt update <<EOF\nTr0ub4dor-3xy\nEOF\necho next", ["sudo -S apt update <<EOF\n", "\nEOF\necho next"]],
      ["sudo -S tee /etc/motd <<'END'\nTr0ub4dor-3xy\nhello\nEND", ["\nhello\nEND"]],
      ["echo Tr0ub4dor-3xy | sudo --stdin apt update", ["| sudo --stdin apt update"]],
    ];
    for (const [text, keep] of cases) expectGone(text, "Tr0ub4dor-3xy".slice(0, 9), keep);
  });

  it("leaves a variable, another program's -S and sudo without -S alone", () => {
    expectKept('sudo -S apt update <<< "$SUDO_PASSWORD"');
    expectKept("sudo pacman -S vim <<< 'yes-please'");
    expectKept("sudo tee /etc/motd <<< 'welcome-to-prod'");
    expectKept("sudo tee /etc/motd <<EOF\nwelcome-to-prod\nEOF");
  });
});

describe("a storage account's keys as az prints them in tsv and table output", () => {
  const key1 = `${alnum(60)}+/${alnum(24)}==`;
  const key2 = `${alnum(40).split("").reverse().join("")}${alnum(46)}==`;
  it("go, and the key names and permissions stay", () => {
    const tsv = `$ az storage account keys list -g rg -n acct -o tsv\n2024-05-01T12:00:00.000000+00:00\tkey1\tFULL\t${key1}\n2024-05-01T12:00:00.000000+00:00\tkey2\tFULL\t${key2}\n`;
    const table = [
      "$ az storage account keys list -g rg -n acct -o table",
      "CreationTime                      KeyName    Permissions    Value",
      `--------------------------------  ---------  -------------  ${"-".repeat(88)}`,
      `2024-05-01T12:00:00.000000+00:00  key1       FULL           ${key1}`,
      `2024-05-01T12:00:00.000000+00:00  kerb2      READ           ${key2}`,
    ].join("\n");
    for (const text of [tsv, table]) {
      expectGone(text, key1, ["key1"]);
      expectGone(text, key2, ["FULL"]);
    }
  });

  it("leave a table of other things alone", () => {
    expectKept(`key1  FULL  ${"ab".repeat(30)}`);
  });
});

describe("a Twilio auth token passed after the account SID", () => {
  it("goes in every client's constructor, and the SID stays", () => {
    const sid = `AC${hex(32)}`;
    const token = hex(64).slice(32);
    for (const text of [
      `from twilio.rest import Client\nclient = Client('${sid}', '${token}')`,
      `const client = require("twilio")("${sid}", "${token}");`,
      `@client = Twilio::REST::Client.new '${sid}', '${token}'`,
      `Twilio.init("${sid}", "${token}");`,
      `TwilioClient.Init("${sid}","${token}");`,
    ]) {
      expectGone(text, token, [sid]);
    }
  });

  it("leaves two SIDs, or a SID and a name, alone", () => {
    expectKept(`client.calls('CA${hex(32)}', 'AC${hex(32)}')`);
    expectKept(`lookup('AC${hex(32)}', 'friendly-name')`);
  });
});

describe("a token as a URL's password", () => {
  it("goes alone: the user, host and path stay", () => {
    const token = `ghs_${alnum(36)}`;
    const cases: [string, string][] = [
      [`git remote set-url origin https://x-access-token:${token}@github.com/owner/repo.git`, "https://x-access-token:[REDACTED]@github.com/owner/repo.git"],
      [`git clone https://gitlab-ci-token:${alnum(20)}@gitlab.example.com/group/app.git src`, "https://gitlab-ci-token:[REDACTED]@gitlab.example.com/group/app.git src"],
      [`pip install git+https://api-token:Zx9-kP2q7mR7vL4s@git.example.com/lib.git`, "https://api-token:[REDACTED]@git.example.com/lib.git"],
    ];
    for (const [text, expected] of cases) {
      expect(redactText(text).text).toContain(expected);
      const back = (JSON.parse(redactText(JSON.stringify({ content: text })).text) as { content: string }).content;
      expect(back).toContain(expected);
    }
  });
});

describe("a secret under a name that could name a Kubernetes Secret", () => {
  it("goes when it is no Secret's name: mixed case, punctuation, or one long random run", () => {
    const cases: [string, string][] = [
      ["externalSecret: Zx9-kP2q!mR7vL4sT8wY\nreplicas: 2", "Zx9-kP2q!mR7vL4sT8wY"],
      [`existingSecret: ${hex(32)}`, hex(32)],
      ["EXTERNAL_SECRET=Zx9kP2qmR7vL4sT8wY", "Zx9kP2qmR7vL4sT8wY"],
      [JSON.stringify({ auth: { externalSecret: "kx8mq2vz7rw4pn3ty6bh" } }), "kx8mq2vz7rw4pn3ty6bh"],
    ];
    for (const [text, secret] of cases) expectGone(text, secret, [text.slice(0, 8)]);
    const { value } = redactValue({ externalSecret: "Zx9-kP2q!mR7vL4sT8wY", existingSecret: "db-creds-2" });
    expect(value).toEqual({ externalSecret: "[REDACTED]", existingSecret: "db-creds-2" });
  });

  it("stays when it names one", () => {
    expectKept("externalSecret: vault-db-creds\nsealedSecret: app-sealed-3\nexistingSecret: postgresql-6f7g8h9k2m");
    expectKept(JSON.stringify({ auth: { existingSecret: "db-creds-2", envFromSecret: "app.env.5" } }));
  });
});

describe("an AWS session token with no name beside it", () => {
  it("goes in the text output of aws sts and in prose, by the head every STS token has", () => {
    const body = `${alnum(60)}//////////${alnum(120)}+${alnum(80)}=`;
    for (const head of ["IQoJb3JpZ2luX2Vj", "FwoGZXIvYXdzE", "AQoDYXdzE"]) {
      const token = `${head}${body}`;
      expectGone(`$ aws sts assume-role --role-arn arn:aws:iam::1:role/ci --role-session-name ci --output text\nCREDENTIALS\tASIA${"Q".repeat(16)}\t2024-05-01T12:00:00Z\t${alnum(40)}\t${token}\n`, token.slice(8), ["2024-05-01T12:00:00Z"]);
      expectGone(`export the token ${token} before the deploy`, token.slice(4), ["before the deploy"]);
    }
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

describe("a Vault token of the older shape (s.…, b.…)", () => {
  it("goes under its name, in a header and bare", () => {
    const token = `s.${alnum(24)}`;
    for (const text of [`export VAULT_TOKEN=${token}`, `curl -H "X-Vault-Token: ${token}" https://vault:8200/v1/kv`, `vault login ${token}`, `VAULT_TOKEN=b.${alnum(24)} vault kv get kv/app`]) {
      expectGone(text, text.includes("b.") ? `b.${alnum(24)}` : token);
    }
  });

  it("leaves member expressions alone", () => {
    expectKept("const token = s.accessTokenFromStorage22;");
    expectKept("return s.aVeryLongPropertyNameHere;");
  });
});

describe("a password in SQL", () => {
  it("goes in CREATE/ALTER USER and ROLE, CREATE LOGIN, IDENTIFIED BY and SET PASSWORD", () => {
    const cases: [string, string][] = [
      ["ALTER USER app WITH PASSWORD 'Tr0ub4dor-3xy';", "ALTER USER app WITH PASSWORD '"],
      ["CREATE ROLE app LOGIN ENCRYPTED PASSWORD 'Tr0ub4dor-3xy' VALID UNTIL 'infinity';", "VALID UNTIL 'infinity'"],
      ["create user app with password 'Tr0ub4dor-3xy';", "create user app with password '"],
      ["CREATE USER 'app'@'%' IDENTIFIED BY 'Tr0ub4dor-3xy';", "CREATE USER 'app'@'%' IDENTIFIED BY '"],
      ["ALTER USER 'root'@'localhost' IDENTIFIED WITH mysql_native_password BY 'Tr0ub4dor-3xy';", "mysql_native_password BY '"],
      ["CREATE USER scott IDENTIFIED BY Tr0ub4dor3xy DEFAULT TABLESPACE users;", "DEFAULT TABLESPACE users"],
      ["SET PASSWORD FOR 'app'@'%' = PASSWORD('Tr0ub4dor-3xy');", "SET PASSWORD FOR 'app'@'%'"],
      ["SET PASSWORD FOR app = 'Tr0ub4dor-3xy';", "SET PASSWORD FOR app = '"],
      ["CREATE LOGIN app WITH PASSWORD = N'Tr0ub4dor-3xy', CHECK_POLICY = OFF;", "CHECK_POLICY = OFF"],
      [`psql -c "ALTER USER postgres PASSWORD 'Tr0ub4dor-3xy';"`, "ALTER USER postgres PASSWORD '"],
    ];
    for (const [text, keep] of cases) expectGone(text, "Tr0ub4dor-3xy".replace("-", text.includes("Tr0ub4dor3xy") ? "" : "-"), [keep]);
  });

  it("leaves a statement without one, and prose, alone", () => {
    expectKept("ALTER USER app WITH PASSWORD NULL;");
    expectKept("CREATE USER app IDENTIFIED BY '${DB_PASSWORD}';");
    expectKept("The column is named password and holds a hash.");
  });
});

describe("a password passed by position to a credential's constructor", () => {
  it("goes, and the user name stays", () => {
    const cases: [string, string][] = [
      [`requests.get(url, auth=("admin", "Tr0ub4dor-3xy"))`, `auth=("admin", "`],
      [`session.auth = HTTPBasicAuth('admin', 'Tr0ub4dor-3xy')`, "HTTPBasicAuth('admin', '"],
      [`aiohttp.BasicAuth(login="admin", password="Tr0ub4dor-3xy")`, `login="admin"`],
      [`var credential = new NetworkCredential("admin", "Tr0ub4dor-3xy", "CORP");`, `"CORP"`],
      [`new UsernamePasswordCredentials("admin", "Tr0ub4dor-3xy")`, `("admin", "`],
      [`$secure = ConvertTo-SecureString "Tr0ub4dor-3xy" -AsPlainText -Force`, "-AsPlainText -Force"],
      [`ConvertTo-SecureString -String 'Tr0ub4dor-3xy' -AsPlainText -Force`, "-String '"],
    ];
    for (const [text, keep] of cases) expectGone(text, "Tr0ub4dor-3xy", [keep]);
  });

  it("leaves variables alone", () => {
    expectKept(`requests.get(url, auth=(user, password))`);
    expectKept(`HTTPBasicAuth(os.environ["USER"], os.environ["PASS"])`);
    expectKept(`ConvertTo-SecureString $plain -AsPlainText -Force`);
  });
});

describe("secrets in vault's table output", () => {
  it("go: every value of a kv secret's data, and a secret-named row of vault read", () => {
    const kv = [
      "$ vault kv get secret/app",
      "====== Secret Path ======",
      "secret/data/app",
      "",
      "======= Metadata =======",
      "Key                Value",
      "---                -----",
      "created_time       2024-05-01T12:00:00.000000Z",
      "version            3",
      "",
      "====== Data ======",
      "Key         Value",
      "---         -----",
      "db_url      postgres://app:Tr0ub4dor-3xy@db/app",
      "password    Tr0ub4dor-3xy",
      "stripe      Zx9kP2qmR7vL4sT8wYab12",
      "",
      "$ echo done",
    ].join("\n");
    expectGone(kv, "Tr0ub4dor-3xy", ["version            3", "created_time       2024-05-01T12:00:00.000000Z", "$ echo done"]);
    expectGone(kv, "Zx9kP2qmR7vL4sT8wYab12", ["stripe      "]);
    const read = "$ vault read database/creds/readonly\nKey                Value\n---                -----\nlease_id           database/creds/readonly/2f6a614c\nlease_duration     768h\npassword           A1a-Tr0ub4dor3xyz\nusername           v-token-readonly-ab12";
    expectGone(read, "A1a-Tr0ub4dor3xyz", ["lease_duration     768h", "username           v-token-readonly-ab12"]);
  });
});

describe("a Redis password", () => {
  it("goes after --requirepass, in redis.conf, in CONFIG SET and in AUTH at the prompt", () => {
    const cases: [string, string][] = [
      ["command: redis-server --requirepass Tr0ub4dor-3xy --port 6380", "--port 6380"],
      ["# redis.conf\nrequirepass Tr0ub4dor-3xy\nmasterauth 'Tr0ub4dor-3xy'\nport 6379", "port 6379"],
      ["redis-cli -h cache CONFIG SET requirepass Tr0ub4dor-3xy", "CONFIG SET requirepass "],
      ["127.0.0.1:6379> AUTH Tr0ub4dor-3xy\nOK", "127.0.0.1:6379> AUTH "],
      ["cache:6379> AUTH default Tr0ub4dor-3xy\nOK", "AUTH default "],
    ];
    for (const [text, keep] of cases) expectGone(text, "Tr0ub4dor-3xy", [keep]);
  });

  it("leaves a variable and prose alone", () => {
    expectKept('command: redis-server --requirepass "${REDIS_PASSWORD}"');
    expectKept("command: redis-server --requirepass $REDIS_PASSWORD");
    expectKept("Set requirepass in redis.conf, then AUTH with it.");
  });
});

describe("a MongoDB user's pwd", () => {
  it("goes in createUser, updateUser and auth", () => {
    for (const text of [
      `db.createUser({ user: "app", pwd: "Tr0ub4dor-3xy", roles: [{ role: "readWrite", db: "app" }] })`,
      `db.getSiblingDB("admin").updateUser("app", { pwd: 'Tr0ub4dor-3xy' })`,
      `db.auth({ user: "app", pwd: "Tr0ub4dor-3xy" })`,
    ]) {
      expectGone(text, "Tr0ub4dor-3xy", ["pwd: "]);
    }
  });

  it("leaves a prompt for it and the shell's pwd alone", () => {
    expectKept(`db.createUser({ user: "app", pwd: passwordPrompt(), roles: [] })`);
    expectKept("cd /srv && pwd: /srv");
  });
});

describe("a password told in a sentence", () => {
  it("goes when the word looks made up: both letter cases and a digit", () => {
    const cases: [string, string, string][] = [
      ["The password is Zk4-orchid-Pq. Rotate it tomorrow.", "Zk4-orchid-Pq", "Rotate it tomorrow."],
      ["my password was Summer2024! and it still works", "Summer2024!", "and it still works"],
      ["Password for user admin: Zk4-orchid-Pq\n$ whoami", "Zk4-orchid-Pq", "$ whoami"],
      ["The passphrase is now Xq7Lp2Vn9Rt, keep it safe", "Xq7Lp2Vn9Rt", "keep it safe"],
    ];
    for (const [text, secret, kept] of cases) expectGone(text, secret, [kept]);
  });

  it("leaves what prose says about a password alone", () => {
    for (const text of ["The password is required", "password is too short: 12 chars", "the password is sha256-hashed", "password is stored in /etc/Secrets2024/x", "the password is rotated every 90 days"]) {
      expectKept(text);
    }
  });
});
