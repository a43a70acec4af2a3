import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { parentSnapshot } from "../../src/orchestrator/session/flow-host.ts";
import { renderContext, selectContext } from "../../src/parent-context/modes.ts";
import { PrintedSecretResults, REDACTED, redactText } from "../../src/runs/index.ts";

/**
 * A secret a command prints alone on the next line, in a text that holds both (a transcript, an
 * answer quoting a session): the command names what it prints, so that line goes, as written and
 * inside a JSON string (with escaped line breaks).
 */
const password = "Tr0ub4dor&3-horse";

function shownBoth(text: string): string[] {
  const plain = redactText(text).text;
  const inJson = (JSON.parse(redactText(JSON.stringify({ out: text })).text) as { out: string }).out;
  return [plain, inJson];
}

describe("a secret a command prints on the line after it", () => {
  it("goes when the command names a secret it prints", () => {
    const commands = [
      "terraform output -raw db_password",
      "tofu output -json admin_token",
      "vault kv get -field=password secret/db",
      "aws configure get aws_secret_access_key",
      "aws secretsmanager get-secret-value --secret-id prod/db --query SecretString --output text",
      "gcloud secrets versions access latest --secret=db",
      "az keyvault secret show --name db --vault-name kv --query value -o tsv",
      "kubectl get secret db -o jsonpath='{.data.password}' | base64 -d",
      "op read op://vault/db/password",
      "security find-generic-password -s db -w",
      "pass show db/prod",
      "doppler secrets get DB_PASSWORD --plain",
      "heroku config:get DATABASE_PASSWORD",
      "printenv DB_PASSWORD",
      'echo "$API_TOKEN"',
      "cat /run/secrets/db_password",
      "op item get db --fields password --reveal",
      "bw get password prod-db",
      "lpass show prod/db --password",
      "secret-tool lookup service db user app",
      "keepassxc-cli show -s vault.kdbx prod/db -a password",
      "az account get-access-token --query accessToken -o tsv",
      "aws ecr get-login-password --region eu-west-1",
      "heroku auth:token",
      "gh auth token",
      "gcloud auth print-access-token",
    ];
    for (const command of commands) {
      for (const prompt of ["$ ", "+ ", ""]) {
        const text = `${prompt}${command}\n${password}\n$ next`;
        for (const shown of shownBoth(text)) {
          expect(shown, text).not.toContain(password.slice(0, 8));
          expect(shown, text).toContain(`${command}\n${REDACTED}\n$ next`);
        }
      }
    }
    // After another command chained on its line (`cd … &&`, `;`), in a transcript too.
    for (const shown of shownBoth(`$ cd /srv/app && vault kv get -field=password secret/db\n${password}\n$ next`)) {
      expect(shown).toBe(`$ cd /srv/app && vault kv get -field=password secret/db\n${REDACTED}\n$ next`);
    }
    // terraform output without -raw prints the value quoted: the quotes stay.
    expect(redactText(`$ terraform output db_password\n"${password}"`).text).toBe(`$ terraform output db_password\n"${REDACTED}"`);
  });

  it("leaves what a command prints alone when it names no secret, or prints an error", () => {
    const kept = [
      "$ terraform output -raw vpc_id\nvpc-0abc123def4567890",
      "$ echo $HOME\n/home/dev",
      "$ printenv PATH\n/usr/local/bin:/usr/bin",
      "$ cat README\n# pi-flow",
      "$ op item get db --fields username\nadmin-user",
      "$ bw get item prod-db\n{}",
      "$ terraform output -raw db_password\n╷\n│ Error: Output \"db_password\" not found",
      "$ echo c3VwZXJzZWNyZXQxMjM= | base64 -d\nsupersecret123",
      "We echo the token count\nback to the user",
    ];
    for (const text of kept) expect(redactText(text).text, text).toBe(text);
  });
});

/** A parent's branch where the model ran `command` with bash and Pi kept its output in a result of its own. */
function branchRunning(command: string, output: string): SessionEntry[] {
  const entries: SessionEntry[] = [];
  const add = (message: object) => entries.push({ type: "message", id: `e${entries.length}`, parentId: entries.at(-1)?.id ?? null, timestamp: new Date(0).toISOString(), message } as unknown as SessionEntry);
  add({ role: "user", content: [{ type: "text", text: "fetch the db password" }] });
  add({ role: "assistant", content: [{ type: "toolCall", id: "call_1", name: "bash", arguments: { command } }] });
  add({ role: "toolResult", toolCallId: "call_1", toolName: "bash", content: [{ type: "text", text: output }], isError: false });
  add({ role: "assistant", content: [{ type: "text", text: "Fetched it." }] });
  add({ role: "user", content: [{ type: "text", text: "now delegate" }] });
  return entries;
}

/** What a child launched with the parent's conversation is given, as the launch evidence keeps it. */
function childPrompt(entries: readonly SessionEntry[]): string {
  const snapshot = parentSnapshot(entries);
  return redactText(renderContext(selectContext(snapshot, { mode: "full" }), snapshot.capturedAt)).text;
}

describe("a secret a command printed, in the tool result that holds its output", () => {
  const commands = [
    "vault kv get -field=password secret/db",
    "terraform output -raw db_password",
    "kubectl get secret db -o jsonpath='{.data.password}' | base64 -d",
    "aws secretsmanager get-secret-value --secret-id prod/db --query SecretString --output text",
    "lpass show --password github.com/work",
  ];

  it("goes from a child's view of the parent's conversation, where the call and its result are two messages", () => {
    for (const command of commands) {
      const prompt = childPrompt(branchRunning(command, `${password}\n`));
      expect(prompt, command).not.toContain(password.slice(0, 8));
      expect(prompt, command).toContain(`[result of bash]\n${REDACTED}`);
      // The call's command stays whole: the entry's name is no secret.
      expect(prompt, command).toContain(JSON.stringify(command).slice(1, -1));
    }
    // A warning the tool wrote to stderr first, merged into the output, is passed over.
    const warned = childPrompt(branchRunning(commands[0]!, `WARNING! The VAULT_ADDR environment variable is not set.\n\n${password}\n`));
    expect(warned).not.toContain(password.slice(0, 8));
    expect(warned).toContain("WARNING! The VAULT_ADDR");
  });

  it("goes from a command the user ran with `!`, which the parent's conversation holds with its output", () => {
    const entries = branchRunning("terraform output -raw vpc_id", "vpc-0abc123def4567890");
    const bang = { role: "bashExecution", command: "vault kv get -field=password secret/db", output: `${password}\n`, exitCode: 0, cancelled: false, truncated: false, timestamp: 0 };
    entries.splice(1, 0, { type: "message", id: "bang", parentId: entries[0]!.id, timestamp: new Date(0).toISOString(), message: bang } as unknown as SessionEntry);
    entries[2] = { ...entries[2]!, parentId: "bang" } as SessionEntry;
    const prompt = childPrompt(entries);
    expect(prompt).toContain("The user ran `vault kv get -field=password secret/db`");
    expect(prompt).not.toContain(password.slice(0, 8));
  });

  it("stays when the command prints no secret, or the result is an error", () => {
    for (const [command, output] of [
      ["terraform output -raw vpc_id", "vpc-0abc123def4567890"],
      ["cat README", "# pi-flow docs and more"],
      ["vault kv get -field=password secret/db", "Error reading secret/db: permission denied"],
    ] as const) {
      expect(childPrompt(branchRunning(command, output)), command).toContain(`[result of bash]\n${output}`);
    }
  });
});

/** One conversation's messages, read in order as a session file's writer reads them. */
function conversation() {
  const printed = new PrintedSecretResults();
  return {
    printed,
    call(id: string, command: string) {
      printed.message({ role: "assistant", content: [{ type: "toolCall", id, name: "bash", arguments: { command } }] });
    },
    result(id: string, text: string, message: object = { role: "toolResult", toolCallId: id, toolName: "bash", content: [{ type: "text", text }], isError: false }) {
      return (printed.message(message) as { content: { text: string }[] }).content[0]!.text;
    },
  };
}

describe("a script of several commands, one of which prints a secret", () => {
  it("loses every one-word line of its output: which line the secret is, is unknown", () => {
    for (const command of [
      "set -e\ncd /srv/app\nvault kv get -field=password secret/db",
      "bash -c 'cd /srv\nvault kv get -field=password secret/db'",
      "cd /srv && terraform output -raw db_password",
      "cat <<'EOF' > notes.txt\nfetching\nEOF\nkubectl get secret db -o jsonpath='{.data.password}' | base64 -d\necho",
    ]) {
      const { call, result } = conversation();
      call("c1", command);
      const out = result("c1", `Switched to /srv\n${password}\n\n`);
      expect(out, command).toBe(`Switched to /srv\n${REDACTED}\n\n`);
    }
  });

  it("keeps its output when no command of it prints a secret, or prints it into a variable", () => {
    for (const command of ["set -e\ncd /srv\nls", "export PGPASSWORD=$(vault kv get -field=password secret/db)\npsql -c 'select 1'", "# vault kv get -field=password secret/db\nls"]) {
      const { call, result } = conversation();
      call("c1", command);
      expect(result("c1", "app.ts\nREADME.md\n"), command).toBe("app.ts\nREADME.md\n");
    }
  });
});

describe("the calls a conversation remembers", () => {
  it("are let go once their result is read: a long session keeps none", () => {
    const { printed, call, result } = conversation();
    for (let i = 0; i < 500; i++) {
      call(`c${i}`, "vault kv get -field=password secret/db");
      expect(result(`c${i}`, `${password}\n`)).toBe(`${REDACTED}\n`);
    }
    expect(printed.pendingCalls()).toBe(0);
  });

  it("do not confuse a later call given the same id: its result is judged by its own command", () => {
    const { call, result } = conversation();
    call("call_0", "vault kv get -field=password secret/db");
    expect(result("call_0", `${password}\n`)).toBe(`${REDACTED}\n`);
    call("call_0", "cat VERSION");
    expect(result("call_0", "v2.4.1-rc3\n")).toBe("v2.4.1-rc3\n");
    // A call whose result never came (an aborted turn) does not judge the next call of its id either.
    call("call_1", "terraform output -raw db_password");
    call("call_1", "git rev-parse HEAD");
    expect(result("call_1", "4f2a9c1e\n")).toBe("4f2a9c1e\n");
  });

  it("still redact a result read again (a checkpoint write retried after it failed)", () => {
    const { call, result } = conversation();
    call("c1", "vault kv get -field=password secret/db");
    const message = { role: "toolResult", toolCallId: "c1", toolName: "bash", content: [{ type: "text", text: `${password}\n` }], isError: false };
    expect(result("c1", "", message)).toBe(`${REDACTED}\n`);
    expect(result("c1", "", message)).toBe(`${REDACTED}\n`);
  });
});
