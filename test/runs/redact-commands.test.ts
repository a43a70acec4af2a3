import { describe, expect, it } from "vitest";
import { REDACTED, redactedJson, redactText, redactValue } from "../../src/runs/index.ts";

const R = REDACTED;

describe("passwords on the command lines of key, archive and secret-store tools", () => {
  it("are redacted: ssh-keygen's old and new passphrases, zip's and 7z's passwords, gh secret set's body", () => {
    for (const [text, expected] of [
      ["ssh-keygen -t ed25519 -N 'hunter2-Tr0ub4dor' -f ~/.ssh/deploy", `ssh-keygen -t ed25519 -N '${R}' -f ~/.ssh/deploy`],
      ["ssh-keygen -p -P old-pass9 -N new-pass9 -f key", `ssh-keygen -p -P ${R} -N ${R} -f key`],
      ["zip -r -P hunter2-Tr0ub4dor backup.zip db/", `zip -r -P ${R} backup.zip db/`],
      ["unzip -P hunter2-Tr0ub4dor backup.zip", `unzip -P ${R} backup.zip`],
      ["7z a -phunter2-Tr0ub4dor -mhe=on backup.7z db/", `7z a -p${R} -mhe=on backup.7z db/`],
      ['gh secret set DEPLOY_KEY --body "q9Zt4Lw8Nc2Vb6Xm" --repo acme/api', `gh secret set DEPLOY_KEY --body "${R}" --repo acme/api`],
      ["gh secret set DEPLOY_KEY -b q9Zt4Lw8Nc2Vb6Xm", `gh secret set DEPLOY_KEY -b ${R}`],
    ] as const) {
      expect(redactText(text).text, text).toBe(expected);
      const escaped = JSON.stringify({ command: text });
      expect((JSON.parse(redactText(escaped).text) as { command: string }).command).toBe(expected);
    }
  });

  it("keeps what takes no password there: an empty passphrase, a prompt, gzip's -P, a body from a file", () => {
    for (const text of ["ssh-keygen -t ed25519 -N '' -f key", "7z x -p backup.7z", "gzip -P 4 file", "gh secret set API_KEY < key.txt", "ls -N foo -P bar"]) {
      expect(redactText(text), text).toEqual({ text, changed: false });
    }
  });
});

describe("a secret's name after --secret", () => {
  it("stays (gcloud's --secret=db-password, docker's --secret id=…): it names a secret, it is none", () => {
    for (const text of [
      "gcloud secrets versions access latest --secret=db-password",
      "gcloud secrets versions access latest --secret=prod/db-password",
      "vault kv get -secret=prod/db-password",
      "gcloud secrets versions access 3 --secret=projects/123/secrets/db-password",
      "gcloud run deploy api --secret db_password --region eu-west1",
      "docker build --secret id=npmrc,src=$HOME/.npmrc .",
    ]) {
      expect(redactText(text), text).toEqual({ text, changed: false });
      expect(redactText(JSON.stringify({ command: text })).changed, text).toBe(false);
    }
  });

  it("still goes when it is a value, and a name under a password flag is a password", () => {
    for (const [text, expected] of [
      ["tool login --secret=hunter2Xy9", `tool login --secret=${R}`],
      ["tool login --secret 'q9Zt-4Lw8-Nc2V'", `tool login --secret '${R}'`],
      ["tool login --secret=Xk9-token-Zq7", `tool login --secret=${R}`],
      ["az login --service-principal --client-secret=db-password", `az login --service-principal --client-secret=${R}`],
      ["mysql --password=db-password", `mysql --password=${R}`],
    ] as const) {
      expect(redactText(text).text, text).toBe(expected);
    }
  });
});

describe("a password manager's --password switch", () => {
  it("keeps the entry's name after it (lpass show, gopass show): the password is what the command prints, and goes", () => {
    for (const command of ["lpass show --password github.com/work", 'lpass show --password "Shared-DB/prod"', "lpass show -c --password team/db-2", "gopass show --password prod/db.internal"]) {
      expect(redactText(command), command).toEqual({ text: command, changed: false });
      expect(redactText(JSON.stringify({ command })).changed, command).toBe(false);
      expect(redactText(`$ ${command}\nq9Zt4Lw8Nc2Vb6Xm\n$ ls`).text, command).toBe(`$ ${command}\n${R}\n$ ls`);
    }
    // Another command's --password on the same line still takes a value.
    expect(redactText("lpass show --password db && mysql --password q9Zt4Lw8 app").text).toBe(`lpass show --password db && mysql --password ${R} app`);
    expect(redactText("lpassx show --password q9Zt4Lw8.x").text).toBe(`lpassx show --password ${R}`);
  });
});

describe("a password set for an account on the command line", () => {
  it("goes: chpasswd's user:password, passwd --stdin, openssl passwd, net user, rabbitmqctl, mc alias set's secret key, a client's login(user, password)", () => {
    for (const [text, expected] of [
      ["RUN echo 'root:q9Zt4Lw8Nc' | chpasswd", `RUN echo 'root:${R}' | chpasswd`],
      ['echo "app:q9Zt4Lw8Nc" | sudo chpasswd', `echo "app:${R}" | sudo chpasswd`],
      ["chpasswd <<< 'app:q9Zt4Lw8Nc'", `chpasswd <<< 'app:${R}'`],
      ["echo 'q9Zt4Lw8Nc' | passwd --stdin app", `echo '${R}' | passwd --stdin app`],
      ["echo -e 'q9Zt4Lw8Nc\\nq9Zt4Lw8Nc' | passwd app", `echo -e '${R}' | passwd app`],
      ["usermod -p $(openssl passwd -6 q9Zt4Lw8Nc) app", `usermod -p $(openssl passwd -6 ${R}) app`],
      ["openssl passwd -1 -salt xyz q9Zt4Lw8Nc", `openssl passwd -1 -salt xyz ${R}`],
      ["net user admin q9Zt4Lw8Nc /add", `net user admin ${R} /add`],
      ["rabbitmqctl add_user admin q9Zt4Lw8Nc", `rabbitmqctl add_user admin ${R}`],
      ["rabbitmqctl change_password admin q9Zt4Lw8Nc", `rabbitmqctl change_password admin ${R}`],
      ["mc alias set local http://minio:9000 minioadmin q9Zt4Lw8NcQ2x", `mc alias set local http://minio:9000 minioadmin ${R}`],
      ["server.login('bot@example.com', 'q9Zt4Lw8Nc')", `server.login('bot@example.com', '${R}')`],
    ] as const) {
      expect(redactText(text).text, text).toBe(expected);
      expect((JSON.parse(redactText(JSON.stringify({ command: text })).text) as { command: string }).command, text).toBe(expected);
    }
  });

  it("keeps what sets none: a prompt, a variable, a deletion, other subcommands", () => {
    for (const text of [
      "passwd app",
      'echo "$NEW_PASSWORD" | passwd --stdin app',
      'echo "app:$PW" | chpasswd',
      "net user admin /delete",
      "net user admin * /add",
      "rabbitmqctl list_users",
      "mc alias list local",
      "openssl passwd -stdin < pw.txt",
      "client.login(user, password)",
    ]) {
      expect(redactText(text), text).toEqual({ text, changed: false });
    }
  });
});

describe("a command line written as a list of its arguments (exec form)", () => {
  it("loses the secret a flag in one item gives the next: Docker's CMD, a container's args, spawn and subprocess argv", () => {
    for (const [text, expected] of [
      ['CMD ["app", "--api-key", "q9Zt4Lw8NcX2vB7m"]', `CMD ["app", "--api-key", "${R}"]`],
      ['command: ["redis-server", "--requirepass", "q9Zt4Lw8NcX2"]', `command: ["redis-server", "--requirepass", "${R}"]`],
      ["        args:\n          - --password\n          - q9Zt4Lw8NcX2\n          - --port\n          - \"5432\"", `        args:\n          - --password\n          - ${R}\n          - --port\n          - "5432"`],
      ['spawn("mysql", ["-u", "root", "-pq9Zt4Lw8NcX2"])', `spawn("mysql", ["-u", "root", "-p${R}"])`],
      ['subprocess.run(["mysql", "-uroot", f"-pq9Zt4Lw8NcX2"])', `subprocess.run(["mysql", "-uroot", f"-p${R}"])`],
      ['execFile("curl", ["-u", "admin:q9Zt4Lw8NcX2", url])', `execFile("curl", ["-u", "admin:${R}", url])`],
    ] as const) {
      expect(redactText(text).text, text).toBe(expected);
      expect((JSON.parse(redactText(JSON.stringify({ file: text })).text) as { file: string }).file, text).toBe(expected);
    }
  });

  it("loses it in a structured value too, written as a journal line or redacted as a value", () => {
    const value = { tool: "exec", args: ["mysql", "-u", "root", "-pq9Zt4Lw8NcX2"], env: [["--token", "q9Zt4Lw8NcX2vB7m"]] };
    const expected = { tool: "exec", args: ["mysql", "-u", "root", `-p${R}`], env: [["--token", R]] };
    expect(redactValue(value)).toEqual({ value: expected, changed: true });
    expect(JSON.parse(redactedJson(value)!)).toEqual(expected);
    const kept = { args: ["node", "server.js", "--port", "8080"], flags: ["-v", "-x"] };
    expect(redactValue(kept)).toEqual({ value: kept, changed: false });
    expect(redactedJson(kept)).toBe(JSON.stringify(kept));
  });

  it("keeps lists of arguments that hold no secret", () => {
    for (const text of [
      'CMD ["node", "server.js", "--port", "8080", "--verbose"]',
      'args: ["--token-file", "/run/secrets/token", "--log-level", "debug"]',
      "args:\n  - --enable-feature\n  - --log-level=debug\n  - --password-file=/etc/pw",
      'docker run -u 1000:1000 app && spawn("id", ["-u", "1000:1000"])',
      '{"tags": ["-", "a-b", "c"], "range": ["-1", "2"]}',
    ]) {
      expect(redactText(text), text).toEqual({ text, changed: false });
    }
  });
});

describe("a secret put into a secret store", () => {
  it("goes: piped or given as a here-string to gh, wrangler, gcloud, docker, vercel; --secret-string, a SecureString's --value, az keyvault's --value", () => {
    for (const [text, expected] of [
      ['echo "q9Zt4Lw8NcX2" | gh secret set API_TOKEN', `echo "${R}" | gh secret set API_TOKEN`],
      ['echo -n "q9Zt4Lw8NcX2" | npx wrangler secret put API_TOKEN', `echo -n "${R}" | npx wrangler secret put API_TOKEN`],
      ["printf '%s' 'q9Zt4Lw8NcX2' | gcloud secrets create api-token --data-file=-", `printf '%s' '${R}' | gcloud secrets create api-token --data-file=-`],
      ["echo q9Zt4Lw8NcX2 | docker secret create db_password -", `echo ${R} | docker secret create db_password -`],
      ['vercel env add API_TOKEN production <<< "q9Zt4Lw8NcX2"', `vercel env add API_TOKEN production <<< "${R}"`],
      ["aws secretsmanager create-secret --name db --secret-string q9Zt4Lw8NcX2", `aws secretsmanager create-secret --name db --secret-string ${R}`],
      ["aws ssm put-parameter --name /db/pw --value q9Zt4Lw8NcX2 --type SecureString", `aws ssm put-parameter --name /db/pw --value ${R} --type SecureString`],
      ["az keyvault secret set --vault-name kv --name db --value q9Zt4Lw8NcX2", `az keyvault secret set --vault-name kv --name db --value ${R}`],
    ] as const) {
      expect(redactText(text).text, text).toBe(expected);
      expect((JSON.parse(redactText(JSON.stringify({ command: text })).text) as { command: string }).command, text).toBe(expected);
    }
  });

  it("keeps a variable, a file, a plain parameter's value and other commands' --value", () => {
    for (const text of [
      'echo "$API_TOKEN" | gh secret set API_TOKEN',
      "gh secret set API_TOKEN < token.txt",
      "aws ssm put-parameter --name /app/region --value eu-west-1 --type String",
      "aws secretsmanager create-secret --name db --secret-string file://db.json",
      "kubectl label pod x --value foo-bar",
    ]) {
      expect(redactText(text), text).toEqual({ text, changed: false });
    }
  });
});

describe("a quoted secret holding its own quote character", () => {
  it("goes whole: YAML's and SQL's doubled single quote, the shell's '\\'' inside single quotes", () => {
    expect(redactText("DB_PASSWORD='it''s-a-s3cret'\nNEXT=1").text).toBe(`DB_PASSWORD='${R}'\nNEXT=1`);
    // TOML's and Python's triple-quoted string on one line, a quote inside.
    expect(redactText('[db]\npassword = """it"s-a-s3cret"""\nhost = "db"').text).toBe(`[db]\npassword = """${R}"""\nhost = "db"`);
    expect(redactText('msg = """the password is required"""').text).toBe('msg = """the password is required"""');
    expect(redactText("db:\n  password: 'it''s-a-s3cret'  # prod\n").text).toBe(`db:\n  password: '${R}'  # prod\n`);
    expect(redactText("mysql --password 'it'\\''s-s3cret' app").text).toBe(`mysql --password '${R}' app`);
    expect(redactText("sshpass -p 'it'\\''s-s3cret' ssh deploy@web").text).toBe(`sshpass -p '${R}' ssh deploy@web`);
    // Empty strings next to each other stay empty strings.
    const code = "x = {'password': '', 'user': 'bob'}";
    expect(redactText(code).text).toBe(code);
  });
});

describe("a passphrase of several words on an INI line", () => {
  it("goes to the line's end (.pypirc, my.cnf); an assignment in code or mid-line stays as it was", () => {
    expect(redactText("[client]\nuser = app\npassword = correct horse battery staple\nhost = db").text).toBe(`[client]\nuser = app\npassword = ${R}\nhost = db`);
    const escaped = JSON.stringify({ content: "[pypi]\npassword = correct horse battery staple\n" });
    expect((JSON.parse(redactText(escaped).text) as { content: string }).content).toBe(`[pypi]\npassword = ${R}\n`);
    for (const text of ["password = get_password(user) or default_pw", "password = a - b", "if ok: password = None"]) {
      expect(redactText(text), text).toEqual({ text, changed: false });
    }
  });
});

describe("a passphrase of several words on a YAML or .env line", () => {
  it("goes to the line's end (password: correct horse battery staple, PASSWORD=two words); prose with short words and a capitalised label stay", () => {
    expect(redactText("db:\n  password: correct horse battery staple\n  host: db").text).toBe(`db:\n  password: ${R}\n  host: db`);
    expect(redactText("DB_PASSWORD=velvet morning\nNEXT=1").text).toBe(`DB_PASSWORD=${R}\nNEXT=1`);
    const escaped = JSON.stringify({ content: "auth:\n  admin_password: velvet morning thunder\n" });
    expect((JSON.parse(redactText(escaped).text) as { content: string }).content).toBe(`auth:\n  admin_password: ${R}\n`);
    for (const text of ["password: must be at least 12 characters long", "Password: please rotate this every month", "the password: rotate it soon"]) {
      expect(redactText(text), text).toEqual({ text, changed: false });
    }
  });
});

describe("a password piped to sudo -S", () => {
  it("goes (echo pw | sudo -S, printf '%s\\n' pw | sudo -kS); a variable, a short answer and a pipe to sudo without -S stay", () => {
    expect(redactText("echo 'Hunter2xyz!' | sudo -S apt install nginx").text).toBe(`echo '${R}' | sudo -S apt install nginx`);
    expect(redactText("printf '%s\\n' Hunter2xyz | sudo -kS -v").text).toBe(`printf '%s\\n' ${R} | sudo -kS -v`);
    for (const text of ['echo "$SUDO_PASSWORD" | sudo -S apt update', "echo y | sudo -S true", "echo hello | sudo tee /etc/motd"]) {
      expect(redactText(text), text).toEqual({ text, changed: false });
    }
  });
});

describe("a storage account's keys as az storage account keys list prints them", () => {
  const key = `${"aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5bC7dE9f".repeat(2)}w==`;
  const listed = [{ creationTime: "2024-05-01T12:00:00Z", keyName: "key1", permissions: "FULL", value: key }, { keyName: "primary", value: "enabled" }];
  it("have each value redacted, in text (escaped too) and as structured values; a keyName's plain value stays", () => {
    const redacted = [{ ...listed[0], value: REDACTED }, listed[1]];
    expect(JSON.parse(redactText(JSON.stringify(listed, null, 2)).text)).toEqual(redacted);
    expect(JSON.parse((JSON.parse(redactText(JSON.stringify({ stdout: JSON.stringify(listed) })).text) as { stdout: string }).stdout)).toEqual(redacted);
    expect(redactValue(listed).value).toEqual(redacted);
    expect(JSON.parse(redactedJson(listed)!)).toEqual(redacted);
  });
});

describe("an upper-case env name ending in _AUTH (TWILIO_AUTH)", () => {
  it("has a random value redacted, as _KEY names do; a word or a switch stays", () => {
    expect(redactText("TWILIO_ACCOUNT_SID=AC-test\nTWILIO_AUTH=9f8e7d6c5b4a39281706f5e4d3c2b1a0\n").text).toBe(`TWILIO_ACCOUNT_SID=AC-test\nTWILIO_AUTH=${R}\n`);
    const text = "SMTP_AUTH=login\nBASIC_AUTH=enabled_for_all_users\nOAUTH=1";
    expect(redactText(text)).toEqual({ text, changed: false });
  });
});

describe("a BIP-32 extended private key", () => {
  it("is redacted wherever it stands; an extended public key stays", () => {
    const xprv = "xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi";
    expect(redactText(`wallet root: ${xprv} (m/0H)`).text).toBe(`wallet root: ${R} (m/0H)`);
    const xpub = "xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8";
    expect(redactText(`watch-only: ${xpub}`).changed).toBe(false);
  });
});

describe("a password or token given to a login as it reads it", () => {
  it("goes piped to --password-stdin, --with-token or vault login -, as vault login's argument, to npm config set, and in ANSI-C quotes", () => {
    for (const [text, expected] of [
      ["echo Zk4-orchid-Pq | docker login --password-stdin -u bot ghcr.io", `echo ${R} | docker login --password-stdin -u bot ghcr.io`],
      ["printf '%s' 'Zk4-orchid-Pq' | helm registry login r.io -u bot --password-stdin", `printf '%s' '${R}' | helm registry login r.io -u bot --password-stdin`],
      ["echo hvs.Zk4orchidPq7788aaBBccDDeeff | vault login -", `echo ${R} | vault login -`],
      ["vault login -no-print Zk4orchidPq7788", `vault login -no-print ${R}`],
      ["npm config set //registry.npmjs.org/:_authToken Zk4orchidPq7788aa", `npm config set //registry.npmjs.org/:_authToken ${R}`],
      ["yarn config set npmAuthToken Zk4orchidPq7788aa", `yarn config set npmAuthToken ${R}`],
      ["export DB_PASSWORD=$'Zk4-orchid-Pq'\nnext", `export DB_PASSWORD=$'${R}'\nnext`],
    ] as const) {
      expect(redactText(text).text, text).toBe(expected);
      expect(redactText(JSON.stringify({ command: text })).text, text).not.toContain("Zk4");
    }
  });

  it("leaves a variable, a login method and a setting's name alone", () => {
    for (const text of [
      'echo "$CR_PAT" | docker login ghcr.io -u bot --password-stdin',
      "vault login -method=github token=x",
      "vault login token",
      "npm config set //npm.pkg.github.com/:_authToken ${GITHUB_TOKEN}",
      "export DB_PASSWORD=$DB_PASSWORD_FROM_VAULT",
    ]) {
      expect(redactText(text), text).toEqual({ text, changed: false });
    }
  });
});
