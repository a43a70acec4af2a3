import { describe, expect, it } from "vitest";
import { REDACTED, redactedJson, redactText, redactValue } from "../../src/runs/index.ts";

/** What both serialisations of evidence write for `value`: the parsed copy and the one-pass line. */
function bothWays(value: unknown): unknown[] {
  return [redactValue(value).value, JSON.parse(redactedJson(value)!)];
}

describe("a secret nested under a secret name in a structured value", () => {
  it("goes from a list inside the list under the name, at any depth", () => {
    for (const written of bothWays({ password: [["hunter2-secret"]], api_key: [[["9f8e7d6c5b4a39281706"], 12]] })) {
      expect(written).toEqual({ password: [[REDACTED]], api_key: [[[REDACTED], 12]] });
    }
  });

  it("goes from the value field of an object under the name or in its list", () => {
    const value = {
      tokens: [{ value: "q9Zt4Lw8Nc2Vb6Xm7Rk1", expires: "2030-01-01" }],
      client_secret: { value: "S3cr3tPass9-rotated", note: "rotated" },
      password: [{ value: "hunter2-secret" }, [{ value: "hunter3-secret" }]],
    };
    const expected = {
      tokens: [{ value: REDACTED, expires: "2030-01-01" }],
      client_secret: { value: REDACTED, note: "rotated" },
      password: [{ value: REDACTED }, [{ value: REDACTED }]],
    };
    for (const written of bothWays(value)) expect(written).toEqual(expected);
  });

  it("keeps placeholders, small numbers and plain keys' lists nested the same way", () => {
    const value = { password: [["${DB_PASSWORD}", 12]], notes: [["hunter2-secret"]], secret: [{ name: "db", value: "****" }] };
    for (const written of bothWays(value)) expect(written).toEqual(value);
  });
});

describe("plural secret names", () => {
  it("redact their values in structured values, as the singular name would", () => {
    const value = { passwords: ["hunter2-secret"], api_keys: ["9f8e7d6c5b4a39281706"], secrets: "S3cr3tPass9-rotated", clientSecrets: [["q9Zt4Lw8Nc2Vb6Xm"]] };
    for (const written of bothWays(value)) expect(written).toEqual({ passwords: [REDACTED], api_keys: [REDACTED], secrets: REDACTED, clientSecrets: [[REDACTED]] });
  });

  it("redact their values in text: an assignment, a flow list, a JSON list", () => {
    expect(redactText("passwords: hunter2-secret").text).toBe(`passwords: ${REDACTED}`);
    expect(redactText("API_KEYS=9f8e7d6c5b4a39281706,a1b2c3d4e5f6a7b8c9d0 next").text).toBe(`API_KEYS=${REDACTED},${REDACTED} next`);
    expect(redactText("secrets: [hunter2abc, s3cr3t!x]").text).toBe(`secrets: [${REDACTED}, ${REDACTED}]`);
    expect(redactText('{"passwords": ["hunter2-secret"]}').text).toBe(`{"passwords": ["${REDACTED}"]}`);
    expect(redactText('{"tokens": ["q9Zt4Lw8Nc2Vb6Xm7Rk1"]}').text).toBe(`{"tokens": ["${REDACTED}"]}`);
  });

  it("keep token counts and a tokenizer's pieces: `tokens` holds a secret only when it looks like one", () => {
    const counts = { max_tokens: 128000, totalTokens: 1234567890, special_tokens: ["<s>", "[INST]", "\n\nHuman:"], tokens: [{ id: 15496, value: "Hello" }] };
    for (const written of bothWays(counts)) expect(written).toEqual(counts);
    for (const text of ["max_tokens=100000", '{"max_tokens": 200000, "input_tokens": 123456789}', '{"stop_tokens": ["\\n\\nHuman:", "[INST]"]}', "tokens: 1234567 used"]) {
      expect(redactText(text)).toEqual({ text, changed: false });
    }
  });
});

describe("a YAML block list under a secret name", () => {
  it("has its credential-shaped items redacted, singular or plural name, and the lines after it kept", () => {
    expect(redactText("db:\n  password:\n    - s3cret99\n    - 'other-pass1'\n  host: db").text).toBe(`db:\n  password:\n    - ${REDACTED}\n    - '${REDACTED}'\n  host: db`);
    expect(redactText("passwords:\n- s3cret99\n- hunter2abc\nuser: app").text).toBe(`passwords:\n- ${REDACTED}\n- ${REDACTED}\nuser: app`);
    expect(redactText("api_keys:  # rotated monthly\n  - 9f8e7d6c5b4a39281706\n").text).toBe(`api_keys:  # rotated monthly\n  - ${REDACTED}\n`);
  });

  it("is redacted inside a JSON string too, where its lines are escaped", () => {
    const text = JSON.stringify({ content: "secrets:\n  - s3cret99-value\n  - hunter2abc\nport: 80" });
    const out = redactText(text).text;
    expect(out).not.toContain("s3cret99");
    expect(out).not.toContain("hunter2abc");
    expect((JSON.parse(out) as { content: string }).content).toBe(`secrets:\n  - ${REDACTED}\n  - ${REDACTED}\nport: 80`);
  });

  it("keeps references, placeholders, maps and the items of other keys", () => {
    for (const text of [
      "secrets:\n  - db_password\n  - source: api_token\n    target: token\n",
      "password:\n  - ${DB_PASSWORD}\n  - <your password>\n",
      "tokens:\n  - hello\n  - world9\n",
      "hosts:\n  - s3cret99\n",
      "password:\nhost: db\n  - s3cret99\n",
    ]) {
      expect(redactText(text)).toEqual({ text, changed: false });
    }
  });
});

describe("a YAML block scalar under a secret name", () => {
  it("has its lines redacted, with real or escaped line breaks, and the next key kept", () => {
    expect(redactText("db:\n  password: |\n    hunter2-secret\n  host: db").text).toBe(`db:\n  password: |\n    ${REDACTED}\n  host: db`);
    expect(redactText("client_secret: >-\n  q9Zt4Lw8Nc2Vb6Xm\n  7Rk1Hs3Jd5\n\nnext: 1").text).toBe(`client_secret: >-\n  ${REDACTED}\n  ${REDACTED}\n\nnext: 1`);
    const text = JSON.stringify({ content: "stringData:\n  password: |-\n    hunter2-secret\n  user: app" });
    expect((JSON.parse(redactText(text).text) as { content: string }).content).toBe(`stringData:\n  password: |-\n    ${REDACTED}\n  user: app`);
  });

  it("keeps placeholders and other keys' block scalars", () => {
    for (const text of ["password: |\n  ${DB_PASSWORD}\nuser: app", "description: |\n  hunter2-secret is an example\n", "password: |\nuser: hunter2-secret"]) {
      expect(redactText(text), text).toEqual({ text, changed: false });
    }
  });
});

describe("credential names", () => {
  it("hold a secret as any secret name does: `credential`, `credentials`", () => {
    expect(redactText("REGISTRY_CREDENTIALS=ci:Pa55w0rd-9 ./push.sh").text).toBe(`REGISTRY_CREDENTIALS=${REDACTED} ./push.sh`);
    expect(redactText('{"credential": "q9Zt4Lw8Nc2Vb6Xm7Rk1"}').text).toBe(`{"credential": "${REDACTED}"}`);
    expect(redactValue({ smtp: { credentials: "hunter2-secret" } }).value).toEqual({ smtp: { credentials: REDACTED } });
  });

  it("keep fetch's modes, code and file paths", () => {
    for (const text of [
      "fetch(url, { credentials: 'include' })",
      '{"credentials": "same-origin", "withCredentials": true}',
      'credentials = service_account.Credentials.from_service_account_file("sa.json")',
      "const credentials = await fromIni({ profile: 'dev' });",
      "AWS_SHARED_CREDENTIALS_FILE=~/.aws/credentials",
      "GOOGLE_APPLICATION_CREDENTIALS=/var/secrets/google/sa.json",
      "credential.helper=store",
    ]) {
      expect(redactText(text), text).toEqual({ text, changed: false });
    }
  });
});

describe("a secret escaped deeper than four levels (JSON in JSON in JSON…)", () => {
  const password = "pa$ss\\wo/rd\u00e9" + "1";
  const nest = (value: object, depth: number): string => {
    let text = JSON.stringify(value);
    for (let i = 1; i < depth; i++) text = JSON.stringify({ inner: text });
    return text;
  };
  const unnest = (text: string, depth: number): unknown => {
    let value = JSON.parse(text) as { inner?: string };
    for (let i = 1; i < depth; i++) value = JSON.parse(value.inner!) as { inner?: string };
    return value;
  };

  it("goes whole at five to eight levels, and every document stays valid JSON", () => {
    for (let depth = 5; depth <= 8; depth++) {
      for (const value of [{ password }, { command: `mysql -uroot -p${password} app` }, { url: `postgres://app:${password}@db/app` }, { env: `DB_PASS=${password}\nNEXT=1` }]) {
        const out = redactText(nest(value, depth)).text;
        const back = JSON.stringify(unnest(out, depth));
        expect(back, `depth ${depth}: ${out.slice(0, 200)}`).not.toContain("wo/rd");
        expect(back).toContain(REDACTED);
      }
    }
  });
});

describe("a session cookie in a structured value", () => {
  const session = "k2p9x7q4w8z1m5n3b6v0a8s7";
  it("goes from a HAR file's cookie, cookie header and authorization entries, a browser's export and a cookies map; other cookies and headers stay", () => {
    const har = {
      request: {
        cookies: [{ name: "sessionid", value: session }, { name: "remember_web_59ba36", value: `${session}Q7` }, { name: "theme", value: "dark" }],
        headers: [{ name: "Cookie", value: `sessionid=${session}; theme=dark` }, { name: "authorization", value: `Token ${session}` }, { name: "Accept", value: "text/html" }],
      },
      response: { headers: [{ name: "Set-Cookie", value: `PHPSESSID=${session}; path=/` }] },
    };
    const exported = [{ domain: ".example.com", httpOnly: true, name: "_gitlab_session", path: "/", value: session }];
    for (const written of bothWays({ har, exported, cookies: { sessionid: session, theme: "dark" } })) {
      expect(JSON.stringify(written)).not.toContain(session);
      expect(written).toMatchObject({
        har: { request: { cookies: [{ name: "sessionid" }, { name: "remember_web_59ba36" }, { name: "theme", value: "dark" }], headers: [{ name: "Cookie" }, { name: "authorization" }, { name: "Accept", value: "text/html" }] } },
        exported: [{ name: "_gitlab_session", value: REDACTED }],
        cookies: { sessionid: REDACTED, theme: "dark" },
      });
    }
  });

  it("keeps a session's identifier that is no cookie: a CLI's session_id, a sessionId", () => {
    const value = { type: "system", session_id: "4b1c2a7e-9f3d-4c8b-a1e2-5d6f7a8b9c0d", sessionId: "4b1c2a7e9f3d4c8ba1e25d6f7a8b9c0d", cookies: [{ name: "lang", value: "en-GB" }] };
    for (const written of bothWays(value)) expect(written).toEqual(value);
  });
});

