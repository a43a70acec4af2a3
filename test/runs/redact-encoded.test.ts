import { describe, expect, it } from "vitest";
import { REDACTED, redactText } from "../../src/runs/index.ts";
import { rulePatternRuns } from "../../src/runs/redact/engine.ts";

const b64 = (text: string) => Buffer.from(text).toString("base64");

describe("base64 of a JSON document holding a secret", () => {
  it("goes whole: a Kubernetes docker-registry secret, a base64'd config.json, escaped or not", () => {
    const compact = b64(JSON.stringify({ auths: { "ghcr.io": { username: "bot", password: "Pa55w0rd-ghcr", auth: b64("bot:Pa55w0rd-ghcr") } } }));
    const pretty = b64(JSON.stringify({ auths: { "registry.internal": { auth: b64("ci:hunter2-pass") } } }, null, 2));
    const settings = b64(JSON.stringify({ service: "billing", apiKey: "9f8e7d6c5b4a39281706f5e4" }));
    expect(redactText(`data:\n  .dockerconfigjson: ${compact}\ntype: kubernetes.io/dockerconfigjson`).text).toBe(`data:\n  .dockerconfigjson: ${REDACTED}\ntype: kubernetes.io/dockerconfigjson`);
    expect(redactText(`{"data":{"config.json":"${pretty}"}}`).text).toBe(`{"data":{"config.json":"${REDACTED}"}}`);
    expect(redactText(`echo ${settings} | base64 -d > settings.json`).text).toBe(`echo ${REDACTED} | base64 -d > settings.json`);
    const escaped = JSON.stringify({ command: `kubectl apply -f - <<< '{"data":{".dockerconfigjson":"${compact}"}}'` });
    expect(redactText(escaped).text).not.toContain(compact.slice(8, 40));
  });

  it("stays when the document holds no secret, and other base64 stays as it is", () => {
    for (const text of [
      `.dockerconfigjson: ${b64(JSON.stringify({ auths: { "ghcr.io": {} } }))}`,
      `config: ${b64(JSON.stringify({ replicas: 3, image: "ghcr.io/acme/api:1.4.2", env: { LOG_LEVEL: "debug" } }))}`,
      `token eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9 is only a JWT's header`,
      `data: ${b64("plain notes, nothing secret in them at all")}`,
    ]) {
      expect(redactText(text), text).toEqual({ text, changed: false });
    }
  });
});

describe("base64 of a PEM private key", () => {
  it("goes whole: a kubeconfig's client-key-data, a Kubernetes TLS secret's tls.key", () => {
    const key = b64("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx3kq9Zt4Lw8Nc2Vb6Xm7Rk1Hs3Jd5\n-----END RSA PRIVATE KEY-----\n");
    const cert = b64("-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEq9Zt4Lw8Nc2Vb6Xm7Rk1MA0GCSqGSIb3DQEBCwUAMBExDzAN\n-----END CERTIFICATE-----\n");
    const kubeconfig = `users:\n- name: admin\n  user:\n    client-certificate-data: ${cert}\n    client-key-data: ${key}\n`;
    expect(redactText(kubeconfig).text).toBe(`users:\n- name: admin\n  user:\n    client-certificate-data: ${cert}\n    client-key-data: ${REDACTED}\n`);
    expect(redactText(JSON.stringify({ data: { "tls.crt": cert, "tls.key": key } })).text).toBe(JSON.stringify({ data: { "tls.crt": cert, "tls.key": REDACTED } }));
  });
});

describe("base64 wrapped at 76 or 64 columns (`base64`, `openssl base64`)", () => {
  const wrap = (text: string, width: number) => text.match(new RegExp(`.{1,${width}}`, "g"))!.join("\n");
  it("goes whole, every line of it, when the document holds a secret; the lines after it stay", () => {
    const config = b64(JSON.stringify({ auths: { "registry.internal:5000": { username: "ci-bot", password: "Pa55w0rd-registry-2024", auth: b64("ci-bot:Pa55w0rd-registry-2024") } } }));
    const key = b64("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx3kq9Zt4Lw8Nc2Vb6Xm7Rk1Hs3Jd5\n-----END RSA PRIVATE KEY-----\n");
    for (const width of [76, 64]) {
      for (const encoded of [config, key]) {
        const wrapped = wrap(encoded, width);
        expect(wrapped.split("\n").length).toBeGreaterThan(1);
        expect(redactText(`$ base64 config.json\n${wrapped}\n$ echo done`).text).toBe(`$ base64 config.json\n${REDACTED}\n$ echo done`);
        expect(redactText(JSON.stringify({ stdout: `${wrapped}\n` })).text).toBe(JSON.stringify({ stdout: `${REDACTED}\n` }));
      }
    }
    // A wrapped document with no secret stays.
    const plain = wrap(b64(JSON.stringify({ replicas: 3, image: "ghcr.io/acme/api:1.4.2", env: { LOG_LEVEL: "debug", REGION: "eu-west-1" } })), 76);
    expect(redactText(plain).text).toBe(plain);
  });
});

describe("base64 a command decodes (echo … | base64 -d, base64 -d <<< …)", () => {
  const token = "ghp_" + "aB3dE5gH7jK9mN1pQ2rS4tU6vW8xY0zaB3dE";
  it("goes when what it decodes to holds a secret a rule knows, quoted, escaped in JSON or not", () => {
    for (const decoded of [token, "postgres://app:Zk4-orchid-Pq@db:5432/app", "DB_PASSWORD=Zk4-orchid-Pq"]) {
      const encoded = b64(decoded);
      for (const command of [`echo ${encoded} | base64 -d`, `echo -n '${encoded}' | base64 --decode > .env`, `printf '%s' ${encoded} | base64 -D`, `base64 -d <<< "${encoded}"`]) {
        const out = redactText(command).text;
        expect(out, command).not.toContain(encoded.slice(4, 24));
        expect(out, command).toContain(REDACTED);
        expect(redactText(JSON.stringify({ command })).text, command).not.toContain(encoded.slice(4, 24));
      }
    }
  });

  it("stays when it decodes to text no rule finds a secret in (an unnamed value cannot be judged: docs/runs.md)", () => {
    for (const text of [`echo ${b64("hello from the build server")} | base64 -d`, "$ echo c3VwZXJzZWNyZXQxMjM= | base64 -d", `base64 -d <<< ${b64("release-2024")}`]) {
      expect(redactText(text), text).toEqual({ text, changed: false });
    }
  });
});

describe("a token split across string literals joined by +", () => {
  const body = "aB3dE5gH7jK9mN1pQ2rS4tU6vW8xY0zaB3dE";
  it("goes from every literal that holds a piece of it, the code around it kept", () => {
    for (const code of [
      `const t = "ghp_" + "${body}";`,
      `const t = "ghp_${body.slice(0, 12)}" + "${body.slice(12)}";`,
      `token = 'ghp_' + '${body.slice(0, 20)}' +\n    '${body.slice(20)}'`,
    ]) {
      for (const text of [code, JSON.stringify({ content: code })]) {
        const out = redactText(text).text;
        for (let at = 0; at + 8 <= body.length; at += 4) expect(out, text).not.toContain(body.slice(at, at + 8));
      }
    }
    expect(redactText(`const url = "postgres://app:" + "Zk4-orchid-Pq@db/app";`).text).toBe(`const url = "postgres://app:" + "${REDACTED}@db/app";`);
  });

  it("leaves joined literals that hold no secret, and a chain a variable breaks, alone", () => {
    for (const text of [`x = "a" + "b" + name`, `msg = "hello " + "world"`, `const t = "ghp_" + suffix + "${body}";`.replace(body, "and more")]) {
      expect(redactText(text), text).toEqual({ text, changed: false });
    }
  });
});

describe("a secret behind HTML or XML character references", () => {
  it("goes: JSON in an HTML attribute, an escaped XML element, a numeric reference for = or :, in a JSON string too", () => {
    for (const [text, expected] of [
      ['<div data-config="{&quot;apiKey&quot;:&quot;9f8e7d6c5b4a39281706f5e4&quot;,&quot;region&quot;:&quot;eu&quot;}">', `<div data-config="{&quot;apiKey&quot;:&quot;${REDACTED}&quot;,&quot;region&quot;:&quot;eu&quot;}">`],
      ["&lt;password&gt;Zk4-orchid-Pq&lt;/password&gt;", `&lt;password&gt;${REDACTED}&lt;/password&gt;`],
      ["DB_PASSWORD&#61;Zk4-orchid-Pq\nNEXT=1", `DB_PASSWORD&#61;${REDACTED}\nNEXT=1`],
      ["db_password&#x3a; Zk4-orchid-Pq\nhost: db", `db_password&#x3a; ${REDACTED}\nhost: db`],
    ] as const) {
      expect(redactText(text).text, text).toBe(expected);
      expect(redactText(JSON.stringify({ page: text })).text, text).not.toContain("Zk4-orchid");
    }
  });

  it("leaves escaped prose and markup alone", () => {
    for (const text of ["a &amp; b &lt;c&gt; &quot;quoted&quot; &#169; 2024", "<a href=\"/search?q=password&amp;page=2\">next</a>", "&lt;password&gt;&lt;/password&gt; is required"]) {
      expect(redactText(text), text).toEqual({ text, changed: false });
    }
  });
});

describe("a token's head written with an escape a language or a shell decodes", () => {
  const tail = "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
  it("goes as written: hex, a code point in braces, octal; in a JSON string too; \\uXXXX and HTML references as before", () => {
    for (const [text, expected] of [
      [`const gh = "\\x67hp_${tail}";`, `const gh = "${REDACTED}";`],
      [`octokit.auth("\\u{67}hp_${tail}");`, `octokit.auth("${REDACTED}");`],
      [`octokit.auth("\\u{000067}hp_${tail}");`, `octokit.auth("${REDACTED}");`],
      [`printf '\\147hp_${tail}' > ~/.cache/gh-token`, `printf '${REDACTED}' > ~/.cache/gh-token`],
      [`echo -e "\\x67\\x68\\x70\\x5f${tail}"`, `echo -e "${REDACTED}"`],
      [`pass\\x77ord=Zx9kQ2mP7vR4\nnext`, `pass\\x77ord=${REDACTED}\nnext`],
      [`gh = "\\u0067hp_${tail}"`, `gh = "${REDACTED}"`],
      [`gh = &#103;hp_${tail}`, `gh = ${REDACTED}`],
    ] as const) {
      expect(redactText(text).text, text).toBe(expected);
      expect((JSON.parse(redactText(JSON.stringify({ code: text })).text) as { code: string }).code, text).toBe(expected);
    }
  });

  it("leaves escapes that spell no secret alone: colour codes, letters, an emoji, a Windows path", () => {
    for (const text of ["printf '\\x1b[31mfailed\\x1b[0m \\101\\102\\103 \\u{1F600}'", 'const s = "\\x48\\x69 \\u{67}it";', "dir C:\\x64\\tools\\123"]) {
      expect(redactText(text), text).toEqual({ text, changed: false });
      expect(redactText(JSON.stringify({ code: text })).changed, text).toBe(false);
    }
  });

  it("is read decoded line by line: a long message with one escaped head pays for that line, not for the whole message twice", () => {
    const runsOf = (text: string): number => {
      const before = rulePatternRuns();
      redactText(text);
      return rulePatternRuns() - before;
    };
    const message = (line: string) =>
      Array.from({ length: 40 }, (_, i) => (i === 20 ? line : `step ${i}: export DB_PASSWORD=Zx9kQ2mP7vR4tY8w${i} && curl -H "Authorization: Bearer ab${i}cdefghijklmnopqrstuv" https://deploy:pw${i}@ci.internal/job`)).join("\n");
    const escapedLine = `const gh = "\\x67hp_${tail}"; // C:\\work`;
    const withEscaped = message(escapedLine);
    const extra = runsOf(withEscaped) - runsOf(message('const gh = "unset"; // C:\\work'));
    expect(extra).toBeLessThanOrEqual(runsOf(escapedLine));
    expect(redactText(withEscaped).text).toContain(`const gh = "${REDACTED}";`);
  });

  it("opens no escaped view for a `\\u` that no four hex digits follow (`\\u{…}`, a Windows path's `\\users`): nothing is decoded there", () => {
    const runsOf = (text: string): number => {
      const before = rulePatternRuns();
      redactText(text);
      return rulePatternRuns() - before;
    };
    const message = (path: string) => Array.from({ length: 40 }, (_, i) => `step ${i}: copy ${path}\\build${i} && curl https://ci.internal/job/${i}`).join("\n");
    expect(runsOf(message("c:\\users\\dev"))).toBe(runsOf(message("c:\\Users\\Dev")));
    expect(runsOf(`${message("x")}\nprintf '\\u{1F600}'`)).toBe(runsOf(`${message("x")}\nprintf '\\U{1F600}'`));
  });
});

describe("URL-encoded settings", () => {
  const R = "[REDACTED]";
  it("lose their secrets as written, encoded, and the rest stays: a config string, a URL in a query, a form body, encoded twice", () => {
    for (const [text, expected] of [
      ["DATABASE_CONFIG=host%3Ddb%26user%3Dapp%26password%3Dhunter2%2Bx%26port%3D5432", `DATABASE_CONFIG=host%3Ddb%26user%3Dapp%26password%3D${R}%26port%3D5432`],
      ["password%3DTr0ub4dor%263", `password%3D${R}`],
      ["GET /login?next=https%3A%2F%2Fdeploy%3Aq9Zt4Lw8%40ci.internal%2Fjob HTTP/1.1", `GET /login?next=https%3A%2F%2Fdeploy%3A${R}%40ci.internal%2Fjob HTTP/1.1`],
      ["curl -d 'payload=grant_type%3Dclient_credentials%26client_secret%3DZx9kQ2mP7vR4tY8w'", `curl -d 'payload=grant_type%3Dclient_credentials%26client_secret%3D${R}'`],
      ["a=1&client_secret=Zx9kQ2mP7vR4tY8w&token=abc%2Bdef%2F123", `a=1&client_secret=${R}&token=${R}`],
      ["state=token%253DZx9kQ2mP7vR4tY8w%2526scope%253Dread", `state=token%253D${R}%2526scope%253Dread`],
    ] as const) {
      expect(redactText(text).text, text).toBe(expected);
      expect((JSON.parse(redactText(JSON.stringify({ url: text })).text) as { url: string }).url, text).toBe(expected);
    }
  });

  it("lose their secrets when a letter of the key's name or of a token's head is the one encoded", () => {
    const tail = "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
    for (const [text, expected] of [
      ["user=bob&pass%77ord=Zx9kQ2mP7vR4&remember=1", `user=bob&pass%77ord=${R}&remember=1`],
      ["https://app.example.com/session?%70assword=Tr0ub4dor%263", `https://app.example.com/session?%70assword=${R}`],
      ["https://app.example.com/session?pass%2577ord=Tr0ub4dor", `https://app.example.com/session?pass%2577ord=${R}`],
      [`curl "https://hooks.example.com/notify?t=%67hp_${tail}"`, `curl "https://hooks.example.com/notify?t=${R}"`],
    ] as const) {
      expect(redactText(text).text, text).toBe(expected);
      expect((JSON.parse(redactText(JSON.stringify({ url: text })).text) as { url: string }).url, text).toBe(expected);
    }
  });

  it("stay when they hold no secret: a redirect, an encoded filter, a search for a password's name", () => {
    for (const text of [
      "GET /login?next=https%3A%2F%2Fapp.example.com%2Fdashboard%3Ftab%3D2 HTTP/1.1",
      "filter=status%3Dactive%26owner%3Dme%26page%3D2",
      "https://www.google.com/search?q=%22password%3D%22+site%3Agithub.com&hl=en",
      "https://example.com/?q=password%3D%24%7BDB_PASSWORD%7D",
      "https://example.com/search?q=%70assword+reset&lang=en\nwiki/Pass%77ord_strength\nprintf(\"%64s %70d\", name, n)",
    ]) {
      expect(redactText(text), text).toEqual({ text, changed: false });
    }
  });

  it("are read decoded line by line: a long message with one encoded line pays for that line, not for the whole message twice", () => {
    const runsOf = (text: string): number => {
      const before = rulePatternRuns();
      redactText(text);
      return rulePatternRuns() - before;
    };
    // Lines that open many rules (secret words, a bearer, a URL), as a secret-dense log does.
    const message = (tag: string, encoded: string) =>
      Array.from({ length: 40 }, (_, i) =>
        i === 20 ? encoded : `${tag} ${i}: export DB_PASSWORD=Zx9kQ2mP7vR4tY8w${i} && curl -H "Authorization: Bearer ab${i}cdefghijklmnopqrstuv" https://deploy:pw${i}@ci.internal/job`,
      ).join("\n");
    const encodedLine = "GET /login?next=https%3A%2F%2Fdeploy%3Aq9Zt4Lw8%40ci.internal%2Fjob HTTP/1.1";
    const withEncoded = message("with", encodedLine);
    const without = message("without", "GET /login?next=/dashboard HTTP/1.1");
    const extra = runsOf(withEncoded) - runsOf(without);
    expect(extra).toBeLessThanOrEqual(runsOf(`${encodedLine} alone`));
    expect(redactText(withEncoded).text).toContain(`https%3A%2F%2Fdeploy%3A${R}%40ci.internal%2Fjob`);
  });
});
