import { describe, expect, it } from "vitest";
import { REDACTED, redactedJson, redactText, redactValue, redactValueUnder } from "../../src/runs/index.ts";

// Built from pieces so the source file itself does not look like it leaks credentials.
const rep = (c: string, n: number) => c.repeat(n);
const alnum = (n: number) => "aB3dE5gH7jK9mN1pQ2rS4tU6vW8xY0z".repeat(8).slice(0, n);

/** Each secret must disappear from the redacted text; the surrounding context may stay. */
const SECRETS: { name: string; text: string; secret: string }[] = [
  { name: "OpenAI key", text: `OPENAI key is sk-${alnum(48)} ok`, secret: `sk-${alnum(48)}` },
  { name: "OpenAI project key", text: `use sk-proj-${alnum(40)}`, secret: `sk-proj-${alnum(40)}` },
  { name: "Anthropic key", text: `key: sk-ant-api03-${alnum(60)}`, secret: `sk-ant-api03-${alnum(60)}` },
  { name: "GitHub PAT classic", text: `remote uses ghp_${alnum(36)} now`, secret: `ghp_${alnum(36)}` },
  {
    name: "GitHub fine-grained PAT",
    text: `github_pat_${alnum(22)}_${alnum(59)}`,
    secret: `github_pat_${alnum(22)}_${alnum(59)}`,
  },
  { name: "GitHub OAuth", text: `gho_${alnum(36)}`, secret: `gho_${alnum(36)}` },
  { name: "GitLab PAT", text: `token glpat-${alnum(20)}`, secret: `glpat-${alnum(20)}` },
  { name: "AWS access key id", text: `aws id AKIA${rep("Q", 8)}7EXAMPLE done`, secret: `AKIA${rep("Q", 8)}7EXAMPLE` },
  { name: "Google API key", text: `key=AIza${alnum(35)}`, secret: `AIza${alnum(35)}` },
  { name: "Slack bot token", text: `xoxb-${"1234567890"}-${alnum(24)}`, secret: `xoxb-1234567890-${alnum(24)}` },
  { name: "Stripe secret", text: `stripe sk_live_${alnum(24)}`, secret: `sk_live_${alnum(24)}` },
  { name: "Slack client token", text: `found xoxc-1234567890-${alnum(40)} in localStorage`, secret: `xoxc-1234567890-${alnum(40)}` },
  { name: "Slack d cookie", text: `the d cookie is xoxd-${alnum(30)}%2B${alnum(10)}%3D (url-encoded)`, secret: `${alnum(30)}%2B${alnum(10)}` },
  { name: "Docker Hub access token", text: `docker login -u acme --password-stdin <<< dckr_pat_${alnum(27)}`, secret: `dckr_pat_${alnum(27)}` },
  { name: "GitLab runner registration token", text: `register the runner with GR1348941${alnum(20)} from the admin page`, secret: `GR1348941${alnum(20)}` },
  { name: "npm token", text: `//registry.npmjs.org/:_authToken=npm_${alnum(36)}`, secret: `npm_${alnum(36)}` },
  { name: "Hugging Face token", text: `hf_${alnum(34)}`, secret: `hf_${alnum(34)}` },
  {
    name: "JWT",
    text: `cookie eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.${alnum(43)} end`,
    secret: `eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.${alnum(43)}`,
  },
  { name: "Bearer header", text: `Authorization: Bearer ${alnum(20)}9xyz`, secret: `${alnum(20)}9xyz` },
  {
    name: "curl bearer",
    text: `curl -H "Authorization: Bearer abc123def456ghi789jkl" https://api`,
    secret: "abc123def456ghi789jkl",
  },
  { name: "Basic auth header", text: "Authorization: Basic dXNlcjpodW50ZXIyMjI=", secret: "dXNlcjpodW50ZXIyMjI=" },
  {
    name: "RSA private key block",
    text: `before\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA${alnum(60)}\n${alnum(64)}\n-----END RSA PRIVATE KEY-----\nafter`,
    secret: `MIIEowIBAAKCAQEA${alnum(60)}`,
  },
  {
    name: "OpenSSH private key block",
    text: `-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA${alnum(40)}\n-----END OPENSSH PRIVATE KEY-----`,
    secret: `b3BlbnNzaC1rZXktdjEAAAAA${alnum(40)}`,
  },
  {
    name: "unterminated private key",
    text: `-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg${alnum(50)}`,
    secret: `MIIEvQIBADANBg${alnum(50)}`,
  },
  { name: "env password", text: "DB_PASSWORD=Tr0ub4dor&3", secret: "Tr0ub4dor&3" },
  { name: "plain password assignment", text: "password=hunter22", secret: "hunter22" },
  { name: "flag password", text: "mysql --password=s3cr3tP4ss -u root", secret: "s3cr3tP4ss" },
  { name: "JSON password", text: '{"user":"bob","password":"correct horse battery"}', secret: "correct horse battery" },
  { name: "YAML secret", text: "client_secret: 9f8e7d6c5b4a3f2e1d", secret: "9f8e7d6c5b4a3f2e1d" },
  { name: "code literal", text: 'const apiKey = "live-4f9a8b7c6d5e";', secret: "live-4f9a8b7c6d5e" },
  { name: "GITHUB_TOKEN env", text: "export GITHUB_TOKEN=abc123secretvalue", secret: "abc123secretvalue" },
  { name: "URL credentials", text: "clone https://alice:s3cr3t-pa55@github.com/org/repo.git", secret: "s3cr3t-pa55" },
  { name: "postgres URL", text: "DATABASE_URL=postgres://app:pgPa55w0rd@db.internal:5432/app", secret: "pgPa55w0rd" },
  {
    name: "~/.aws/credentials secret",
    text: "[default]\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
    secret: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
  },
  { name: "INI / .pypirc password", text: "[pypi]\nusername = alice\npassword = hunter2hunter2\n", secret: "hunter2hunter2" },
  { name: "upper-case INI password", text: "PASSWORD = hunter2xyz", secret: "hunter2xyz" },
  { name: "URL password with a slash", text: "postgres://admin:ab/cd9xyz@db.example.com/app", secret: "cd9xyz" },
  { name: "URL password with an @", text: "postgres://admin:p@ssw0rd@db.example.com", secret: "ssw0rd" },
];

/** Innocent text that only looks like a secret; it must come back unchanged. */
const INNOCENT: string[] = [
  "The password field is required.",
  "Enter your password:",
  "passwordless login is enabled",
  "interface Creds { password: string; token: string }",
  "password: string",
  "const password = getPassword();",
  "const token = req.headers.token;",
  "token = other_variable",
  "max_tokens=4096",
  "max_tokens: 1024",
  "tokenizer: bpe",
  "the token is expired, please log in again",
  "PWD=/home/alice/project",
  "secret_santa = 'Bob'",
  'password: "${DB_PASSWORD}"',
  "password=$DB_PASSWORD",
  "password: <your password here>",
  "password: ********",
  "token: ''",
  "Bearer of bad news",
  "Use a Bearer token in the Authorization header.",
  "sk-learn is not a package name; scikit-learn is",
  "task-1234 and desk-5678",
  "commit 3f786850e387550fdab836ed7e6dc881de23001b",
  "uuid 123e4567-e89b-12d3-a456-426614174000",
  "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----",
  "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIE\n-----END CERTIFICATE-----",
  "git@github.com:org/repo.git",
  "https://user@example.com/path",
  "postgres://localhost:5432/db",
  "http://example.com:8080/a?b=c",
  "mailto:someone@example.com",
  "AKIA is a prefix, AKIAEXAMPLE is too short",
  "ghp_short",
  "Already redacted: password=[REDACTED]",
  "accessKeyId: process.env.AWS_ACCESS_KEY_ID",
  "has_secret: true",
  "token_count: 5",
  "const secret = createSecret(32);",
  "sk-learn-compatible-estimator-wrapper",
  "pip install sk-learn-compatible-estimator-wrapper==1.2",
  "secret: enabled",
  "the token: refresh",
  "password = getPassword()",
  "const token = await fetchToken(user)",
  "if (password == null) return;",
  "if (token === undefined || token => token) {}",
  "rotate the API key monthly",
  'password = os.environ["DB_PASSWORD"]',
  "api_key = MAX_API_KEY_2",
  "http://host:8080/redirect?to=me@example.com",
  "see http://host:8080/users/me@example.com/profile",
];

describe("redactText", () => {
  for (const { name, text, secret } of SECRETS) {
    it(`removes a ${name}`, () => {
      const out = redactText(text);
      expect(out.changed).toBe(true);
      expect(out.text).not.toContain(secret);
      expect(out.text).toContain(REDACTED);
    });
  }

  for (const text of INNOCENT) {
    it(`keeps ${JSON.stringify(text.slice(0, 50))}`, () => {
      expect(redactText(text)).toEqual({ text, changed: false });
    });
  }

  it("keeps the non-secret context around a secret", () => {
    expect(redactText("clone https://alice:hunter22@github.com/x").text).toBe(`clone https://alice:${REDACTED}@github.com/x`);
    // The whole password goes, however many `/` and `@` it holds; user, host and path stay.
    expect(redactText("postgres://admin:p@ssw0rd@db.example.com").text).toBe(`postgres://admin:${REDACTED}@db.example.com`);
    expect(redactText("postgres://admin:ab/cd9xyz@db.example.com/app").text).toBe(
      `postgres://admin:${REDACTED}@db.example.com/app`,
    );
    expect(redactText("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY").text).toBe(
      `aws_secret_access_key = ${REDACTED}`,
    );
    expect(redactText("Authorization: Bearer abc123def456ghi789jkl").text).toBe(`Authorization: Bearer ${REDACTED}`);
    expect(redactText('{"password":"hunter22"}').text).toBe(`{"password":"${REDACTED}"}`);
  });

  it("takes an HTTP Digest header's response hash and client nonce, and keeps its user, realm, nonce and a server's challenge", () => {
    const header = 'Authorization: Digest username="admin", realm="api", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", uri="/", cnonce="MTIzNDU2Nzg5", nc=00000001, qop=auth, response="6629fae49393a05397450978507c4ef1"';
    const kept = `Authorization: Digest username="admin", realm="api", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", uri="/", cnonce="${REDACTED}", nc=00000001, qop=auth, response="${REDACTED}"`;
    expect(redactText(header).text).toBe(kept);
    expect(redactText(JSON.stringify({ log: header })).text).toBe(JSON.stringify({ log: kept }));
    const challenge = 'WWW-Authenticate: Digest realm="api", qop="auth", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", opaque="5ccc069c403ebaf9f0171e9517f40e41"';
    expect(redactText(challenge).text).toBe(challenge);
  });

  it("gives a short text seen before the same answer, secret or not (remembered texts)", () => {
    for (let pass = 0; pass < 3; pass++) {
      for (const { text, secret } of SECRETS.filter((s) => s.text.length <= 256)) {
        const out = redactText(text);
        expect(out.changed).toBe(true);
        expect(out.text).not.toContain(secret);
      }
      for (const text of INNOCENT) expect(redactText(text)).toEqual({ text, changed: false });
    }
  });

  it("is idempotent", () => {
    for (const { text } of SECRETS) {
      const once = redactText(text).text;
      expect(redactText(once)).toEqual({ text: once, changed: false });
    }
  });

  // Each line is about 1 MB and built to make a backtracking pattern rescan it from every position.
  // The assertion is only that redaction returns and keeps innocent text: a quadratic pattern
  // would not return within the test's timeout.
  const MB = 1 << 20;
  const fill = (unit: string): string => unit.repeat(Math.ceil(MB / unit.length));
  const ADVERSARIAL: string[] = [
    fill("a."), // scheme-like characters with no "://"
    fill("a://b:"), // URL credentials that never reach an "@"
    fill("x://u:p@"), // "@" never followed by a host
    fill("password "), // keys that never get a value
    `password${" ".repeat(MB)}`, // a key followed by a megabyte of whitespace
    `password = "${"a".repeat(MB)}`, // an unterminated quoted value
    fill("token: enabled "), // values that are all words
    fill("sk-learn-"), // a token prefix that never forms a key
    `-----BEGIN ${fill("A ")}`, // a PEM header that never says PRIVATE KEY
    fill("a.b://c:d@"),
    fill('token: "'), // quoted values that never close
    fill("Bearer "),
    `eyJ${fill("a.eyJ")}`,
    fill("secrets:\n  a:\n"), // store maps that open and never hold a value
    fill("kind: Secret\n---\ndata:\n  a: b\n"), // many documents, each a Secret with data
  ];

  it("processes 1 MB adversarial lines and leaves innocent ones unchanged", () => {
    for (const line of ADVERSARIAL) {
      const out = redactText(line);
      expect(out.text.length).toBeGreaterThan(0);
    }
    for (const line of [ADVERSARIAL[0], ADVERSARIAL[3], ADVERSARIAL[4], ADVERSARIAL[6], ADVERSARIAL[7], ADVERSARIAL[8]]) {
      expect(redactText(line ?? "")).toEqual({ text: line, changed: false });
    }
  });

  it("handles a large text with many secrets in one pass", () => {
    const text = Array.from({ length: 2000 }, (_, i) => `line ${i} ghp_${alnum(36)} ok`).join("\n");
    const out = redactText(text);
    expect(out.text).not.toContain("ghp_");
    expect(out.text.split("\n")).toHaveLength(2000);
  });
});

describe("a list under a secret name, written as JSON text", () => {
  it("redacts its string and number items inside quotes, at every escaping depth, as redactValue does for the parsed list", () => {
    const value = { api_key: ["sk-abcdefgh12345678", 123456789, 12, true, null, ["nested9secret"], { note: "kept" }, "after9item"] };
    // Items judged as redactValue judges a parsed list's items by its key; a nested list's too.
    const expected = { api_key: [REDACTED, REDACTED, 12, true, null, [REDACTED], { note: "kept" }, REDACTED] };
    const text = JSON.stringify(value);
    expect(JSON.parse(redactText(text).text)).toEqual(expected);
    // The diagnostics line of a tool call, and the arguments escaped in a span attribute.
    const line = JSON.stringify({ tool: "configure", arguments: text });
    const out = redactText(line).text;
    expect(out).not.toContain("sk-abcdefgh12345678");
    expect(out).not.toContain("123456789");
    expect(JSON.parse((JSON.parse(out) as { arguments: string }).arguments)).toEqual(expected);
    const twice = JSON.stringify({ attributes: { "pi_flow.tool.arguments": line } });
    const back = JSON.parse(JSON.parse((JSON.parse(redactText(twice).text) as { attributes: Record<string, string> }).attributes["pi_flow.tool.arguments"]!).arguments) as unknown;
    expect(back).toEqual(expected);
  });

  it("keeps placeholders, short words and small numbers, as for a single value", () => {
    for (const text of [
      '{"password": ["<password>", "${DB_PASSWORD}", "********", "[REDACTED]", "sk-..."]}',
      '{"token": ["ollama"], "secret": [12, 300]}',
      '{"password_hash": ["x9y8z7w6v5"], "tokens": ["hello9world"]}',
    ]) {
      expect(redactText(text)).toEqual({ text, changed: false });
    }
    expect(redactText('{"password": ["hunter2abc"]}').text).toBe('{"password": ["[REDACTED]"]}');
  });

  it("redacts a YAML flow list's credential-shaped items and keeps words and code", () => {
    expect(redactText("password: [hunter2abc, s3cr3t!x]").text).toBe("password: [[REDACTED], [REDACTED]]");
    // `#` inside a plain item is part of it: a comment starts only after a space.
    expect(redactText("password: [orchid234#5NqjYA, old-one] # rotated").text).toBe("password: [[REDACTED], old-one] # rotated");
    for (const text of ["password: [abc, def]", "secret = [x.y, getS()]", "token = [tokenA, tokenB]", "api_key: [${KEY}, <your-key>]"]) {
      expect(redactText(text).text).toBe(text);
    }
  });

  it("a number under a secret-named JSON key, as text, becomes the string \"[REDACTED]\" and the JSON stays valid", () => {
    const text = JSON.stringify({ arguments: JSON.stringify({ db_password: 83749212, port: 5432 }) });
    const out = redactText(text).text;
    expect(out).not.toContain("83749212");
    expect(JSON.parse((JSON.parse(out) as { arguments: string }).arguments)).toEqual({ db_password: REDACTED, port: 5432 });
    expect(redactText('{"password": 83749212}').text).toBe('{"password": "[REDACTED]"}');
  });
});

describe("credential files", () => {
  it("redacts .npmrc's _auth (base64 of user:password) and .netrc's default entry", () => {
    const auth = Buffer.from("deploy:hunter2abc").toString("base64");
    expect(redactText(`registry=https://npm.internal/\n_auth = ${auth}\n`).text).toBe("registry=https://npm.internal/\n_auth = [REDACTED]\n");
    expect(redactText(`//npm.internal/:_auth=${auth}`).text).toBe("//npm.internal/:_auth=[REDACTED]");
    expect(redactText("default login anonymous password hunter2abc").text).toBe("default login anonymous password [REDACTED]");
    for (const text of ["_auth = ${NPM_AUTH}", "the default password is required", "_auth=c29tZXRleHQ="]) expect(redactText(text).text).toBe(text);
  });
});

describe("redactValue", () => {
  it("redacts strings at any depth and values under secret-named keys", () => {
    const input = {
      user: "bob",
      password: "hunter22",
      nested: [{ note: `key sk-${alnum(40)}` }, 3, null, false],
      apiKey: "abc-123-def",
    };
    const out = redactValue(input);
    expect(out.changed).toBe(true);
    expect(out.value).toEqual({
      user: "bob",
      password: REDACTED,
      nested: [{ note: `key ${REDACTED}` }, 3, null, false],
      apiKey: REDACTED,
    });
    expect(input.password).toBe("hunter22"); // the input is not mutated
  });

  it("leaves innocent values and falsy results alone", () => {
    for (const value of [
      false,
      null,
      0,
      "",
      { password: "" },
      { token_count: 5 },
      { password: "string" },
      ["Bearer of bad news"],
    ]) {
      expect(redactValue(value)).toEqual({ value, changed: false });
    }
  });

  it("keeps a __proto__ key as data", () => {
    const out = redactValue(JSON.parse('{"__proto__":{"polluted":true},"a":1}'));
    expect(Object.getPrototypeOf(out.value)).toBe(Object.prototype);
    expect(Object.keys(out.value as object)).toEqual(["__proto__", "a"]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("returns the JSON-safe canonical form", () => {
    expect(redactValue({ a: undefined, b: 1 }).value).toEqual({ b: 1 });
    expect(redactValue(undefined)).toEqual({ value: undefined, changed: false });
  });
});

describe("object keys and store keys", () => {
  const token = `ghp_${alnum(36)}`;
  const key = `sk-ant-api03-${alnum(60)}`;

  it("redacts a secret used as an object key, in both serialisations, keeping the keys' order and values", () => {
    const value = { first: 1, [key]: "owner@example.com", nested: [{ [`token ${token}`]: true }], last: 2 };
    const line = redactedJson(value)!;
    const copy = redactValue(value);
    for (const written of [line, JSON.stringify(copy.value)]) {
      expect(written).not.toContain(key);
      expect(written).not.toContain(token);
      expect(Object.keys(JSON.parse(written) as object)).toEqual(["first", REDACTED, "nested", "last"]);
    }
    expect(copy.changed).toBe(true);
    expect(JSON.parse(line)).toEqual({ first: 1, [REDACTED]: "owner@example.com", nested: [{ [`token ${REDACTED}`]: true }], last: 2 });
  });

  it("keeps two keys that redact alike apart, and a __proto__ key as data", () => {
    const value = JSON.parse(`{"${key}":1,"${token}":2,"${REDACTED}":3,"__proto__":{"${key}":4}}`) as object;
    const expected = { [REDACTED]: 1, [`${REDACTED} (2)`]: 2, [`${REDACTED} (3)`]: 3 };
    for (const written of [redactedJson(value)!, JSON.stringify(redactValue(value).value)]) {
      const parsed = JSON.parse(written) as Record<string, unknown>;
      expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
      expect(parsed).toMatchObject(expected);
      expect(Object.getOwnPropertyDescriptor(parsed, "__proto__")?.value).toEqual({ [REDACTED]: 4 });
    }
  });

  it("leaves an object whose keys hold no secret as it is, without a copy", () => {
    const value = { type: "message", id: "31c26910", nested: { text: "hello" } };
    expect(redactedJson(value)).toBe(JSON.stringify(value));
    expect(redactValue(value)).toEqual({ value, changed: false });
  });

  it("judges a stored value under its store key, as in an object", () => {
    expect(redactValueUnder("db_password", 83749212)).toBe(REDACTED);
    expect(redactValueUnder("db_password", 5432)).toBe(5432);
    expect(redactValueUnder("db_password", ["correct-horse-battery-staple-7193", 83749212, "****"])).toEqual([REDACTED, REDACTED, "****"]);
    expect(redactValueUnder("notes", [83749212, "correct-horse-battery-staple-7193"])).toEqual([83749212, "correct-horse-battery-staple-7193"]);
    // The one-pass line judges them alike, whatever wraps them, and a list shared by a plain key is plain there.
    const shared = ["correct-horse-battery-staple-7193"];
    expect(JSON.parse(redactedJson({ api_key: [new String("correct-horse-battery-staple-7193"), new Number(83749212)], token: 61803398, pin: 1234, notes: shared, secret: shared })!)).toEqual({
      api_key: [REDACTED, REDACTED],
      token: REDACTED,
      pin: 1234,
      notes: ["correct-horse-battery-staple-7193"],
      secret: [REDACTED],
    });
    expect(redactValueUnder("db_password", "correct-horse-battery-staple-7193")).toBe(REDACTED);
    // A name/value pair: the value judged under the name, in a value and in text (YAML, JSON, escaped JSON).
    expect(redactValue({ env: [{ name: "DB_PASSWORD", value: "S3cr3tPass9" }, { name: "LOG_LEVEL", value: "debug" }, { name: "API_TOKEN", valueFrom: { secretKeyRef: { name: "x" } } }] }).value).toEqual({
      env: [{ name: "DB_PASSWORD", value: REDACTED }, { name: "LOG_LEVEL", value: "debug" }, { name: "API_TOKEN", valueFrom: { secretKeyRef: { name: "x" } } }],
    });
    expect(JSON.parse(redactedJson([{ ParameterKey: "DBPassword", ParameterValue: 83749212 }, { Name: "/prod/api_key", Value: "string" }])!)).toEqual([
      { ParameterKey: "DBPassword", ParameterValue: REDACTED },
      { Name: "/prod/api_key", Value: "string" },
    ]);
    expect(redactText("- name: DB_PASSWORD\n  value: S3cr3tPass9\n- name: LOG_LEVEL\n  value: debug").text).toBe("- name: DB_PASSWORD\n  value: [REDACTED]\n- name: LOG_LEVEL\n  value: debug");
    expect(redactText('{"name": "API_TOKEN",\n  "value": "q9Zt4Lw8Nc2Vb6Xm"}').text).toBe('{"name": "API_TOKEN",\n  "value": "[REDACTED]"}');
    expect(redactText('"{\\"name\\":\\"API_TOKEN\\",\\"value\\":\\"q9Zt4Lw8Nc2Vb6Xm\\"}"').text).toBe('"{\\"name\\":\\"API_TOKEN\\",\\"value\\":\\"[REDACTED]\\"}"');
    expect(redactText('username: API_TOKEN\n  value: q9Zt4Lw8Nc2Vb6Xm').text).toBe('username: API_TOKEN\n  value: q9Zt4Lw8Nc2Vb6Xm');
    // An Authorization header as a headers object keys it: judged as the header line is.
    const headers = { Authorization: "9f8e7d6c5b4a39281706f5e4d3c2b1a0", "proxy-authorization": "Token q9Zt4Lw8Nc2Vb6Xm", authorization: "required" };
    const judged = { Authorization: REDACTED, "proxy-authorization": REDACTED, authorization: "required" };
    expect(redactValue(headers).value).toEqual(judged);
    expect(JSON.parse(redactedJson(headers)!)).toEqual(judged);
    // Cookies likewise: in JSON text and in a headers object, a session cookie goes; other cookies stay.
    expect(redactText('{"Cookie": "theme=dark; sid=Zt4Lw8Nc2Vb6Xm9qHk3Jd7"}').text).toBe('{"Cookie": "theme=dark; sid=[REDACTED]"}');
    expect(redactValue({ "set-cookie": ["sid=Zt4Lw8Nc2Vb6Xm9qHk3Jd7; Path=/", "theme=dark"], cookie: "theme=dark" }).value).toEqual({ "set-cookie": [REDACTED, "theme=dark"], cookie: "theme=dark" });
    expect(JSON.parse(redactedJson({ "set-cookie": ["sid=Zt4Lw8Nc2Vb6Xm9qHk3Jd7; Path=/", "theme=dark"], cookie: "theme=dark" })!)).toEqual({ "set-cookie": [REDACTED, "theme=dark"], cookie: "theme=dark" });
    // A key's lines as a list: the lines between its opening and end line are the key's; the rest stay.
    const lines = ["intro", "-----BEGIN OPENSSH PRIVATE KEY-----", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW", "-----END OPENSSH PRIVATE KEY----- outro", "plain words"];
    const expected = ["intro", REDACTED, REDACTED, `${REDACTED} outro`, "plain words"];
    expect(redactValue({ lines }).value).toEqual({ lines: expected });
    expect(JSON.parse(redactedJson({ lines })!)).toEqual({ lines: expected });
    // An opening line followed by prose (a model explaining the format): the block ends at the prose.
    const prose = ["Keys start with", "-----BEGIN RSA PRIVATE KEY-----", "and end with a matching line.", "MIIEowIBAAKCAQEA"];
    expect(redactValue(prose).value).toEqual(["Keys start with", REDACTED, "and end with a matching line.", "MIIEowIBAAKCAQEA"]);
    expect(JSON.parse(redactedJson(prose)!)).toEqual(["Keys start with", REDACTED, "and end with a matching line.", "MIIEowIBAAKCAQEA"]);
    expect(redactValueUnder("api_key", "9f8e7d6c5b4a39281706f5e4d3c2b1a0")).toBe(REDACTED);
    expect(redactValueUnder("notes", "correct-horse-battery-staple-7193")).toBe("correct-horse-battery-staple-7193");
    expect(redactValueUnder("creds", { password: "hunter2-but-longer" })).toEqual({ password: REDACTED });
    expect(redactValueUnder("__proto__", { n: 1 })).toEqual({ n: 1 });
    expect(redactValueUnder("notes", undefined)).toBeUndefined();
  });
});

describe("object keys and cycles", () => {
  const key = `sk-ant-api03-${alnum(60)}`;

  it("a value that holds itself under a key to redact is still refused as circular, not followed", () => {
    const value: Record<string, unknown> = {};
    value[key] = value;
    expect(() => redactedJson(value)).toThrow(TypeError);
    expect(() => redactedJson(value)).toThrow(/circular/i);
  });
});
