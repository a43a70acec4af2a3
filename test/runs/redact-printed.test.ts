import { describe, expect, it } from "vitest";
import { REDACTED, redactText } from "../../src/runs/index.ts";

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
    // terraform output without -raw prints the value quoted: the quotes stay.
    expect(redactText(`$ terraform output db_password\n"${password}"`).text).toBe(`$ terraform output db_password\n"${REDACTED}"`);
  });

  it("leaves what a command prints alone when it names no secret, or prints an error", () => {
    const kept = [
      "$ terraform output -raw vpc_id\nvpc-0abc123def4567890",
      "$ echo $HOME\n/home/dev",
      "$ printenv PATH\n/usr/local/bin:/usr/bin",
      "$ cat README\n# pi-flow",
      "$ terraform output -raw db_password\n╷\n│ Error: Output \"db_password\" not found",
      "$ echo c3VwZXJzZWNyZXQxMjM= | base64 -d\nsupersecret123",
      "We echo the token count\nback to the user",
    ];
    for (const text of kept) expect(redactText(text).text, text).toBe(text);
  });
});
