import { describe, expect, it } from "vitest";
import { REDACTED, redactText, redactValue } from "../../src/runs/index.ts";
import { alnum, expectGone, expectKept, hex } from "./pasted.ts";

/**
 * Secrets in the forms tools print or take them: AWS's, Azure's and Vault's outputs, sudo's
 * standard input, a Twilio client, a URL's password, a Kubernetes Secret's name. Each must go
 * whole, as written and inside a JSON string, and the text named in `keep` must stay readable.
 */

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

describe("a header or setting written as a [name, value] pair", () => {
  const token = "q9Zt4Lw8NcX2vB7mK3pL";
  it("goes when the name is a secret's and the value a token: fetch's header entries, Python's tuples, a structured value's pairs", () => {
    expectGone(`fetch(url, { headers: [["X-Api-Key", "${token}"], ["Accept", "application/json"]] })`, token, ['["Accept", "application/json"]']);
    expectGone(`headers = [("X-Auth-Token", '${token}')]`, token);
    expect(redactValue({ headers: [["x-api-key", token], ["accept", "text/html"]] }).value).toEqual({ headers: [["x-api-key", REDACTED], ["accept", "text/html"]] });
  });

  it("stays when the pair lists field names or the value is a word", () => {
    for (const text of ['fields = ("password", "username")', 'columns: ["api_key", "created_at"]', '[["token", "refresh"]]']) {
      expectKept(text);
    }
    expect(redactValue({ fields: ["password", "username"] }).changed).toBe(false);
  });
});

describe("an automation service's webhook URL", () => {
  it("loses its secret path: Zapier's catch hook, Make's hook, IFTTT's key", () => {
    expectGone("curl -X POST https://hooks.zapier.com/hooks/catch/1234567/b3x9k2q/ -d '{}'", "b3x9k2q", ["https://hooks.zapier.com/hooks/catch/"]);
    expectGone("WEBHOOK=https://hook.eu1.make.com/q9zt4lw8nc2vb6xmq9zt4lw8nc2vb6xm", "q9zt4lw8nc2vb6xmq9zt4lw8nc2vb6xm", ["https://hook.eu1.make.com/"]);
    expectGone("https://maker.ifttt.com/trigger/door_open/with/key/dQ9zT4lW8nC2vB6xM1", "dQ9zT4lW8nC2vB6xM1", ["/trigger/door_open/with/key/"]);
  });

  it("leaves their documentation pages alone", () => {
    for (const text of ["https://hooks.zapier.com/ is where Zapier's hooks live", "https://www.make.com/en/help/tools/webhooks", "https://ifttt.com/maker_webhooks"]) expectKept(text);
  });
});

describe("a value GitHub Actions is told to mask", () => {
  it("goes from the ::add-mask:: command that names it, echoed or as the log shows it", () => {
    expectGone('echo "::add-mask::q9Zt4Lw8NcX2vB7m"', "q9Zt4Lw8NcX2vB7m", ["::add-mask::"]);
    expectGone("::add-mask::q9Zt4Lw8NcX2vB7m\nRun ./deploy.sh", "q9Zt4Lw8NcX2vB7m", ["Run ./deploy.sh"]);
  });

  it("leaves a variable it masks alone", () => {
    for (const text of ['echo "::add-mask::$TOKEN"', "echo '::add-mask::${{ steps.auth.outputs.token }}'"]) expectKept(text);
  });
});

describe("a passphrase of several words after a password's name and a tab", () => {
  it("goes whole, in text and in a JSON string; a description, a capitalised phrase and a token's words stay", () => {
    const lines = "user\treport\npassword\tcorrect horse battery staple\nhost\tdb.internal";
    expect(redactText(lines).text).toBe(`user\treport\npassword\t${REDACTED}\nhost\tdb.internal`);
    expect(redactText(JSON.stringify({ out: lines })).text).toBe(JSON.stringify({ out: `user\treport\npassword\t${REDACTED}\nhost\tdb.internal` }));
    const described = "password\tstored in the vault\npassword\tmust be at least 12 characters\nPassword\tRotated every quarter\ntoken\tcorrect horse battery staple";
    expect(redactText(described).text).toBe(described);
  });
});
