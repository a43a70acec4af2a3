import { describe, expect, it } from "vitest";
import { printable, REDACTED, redactText, stripControls } from "../../src/runs/index.ts";

// Built from pieces so the source file itself does not look like it leaks credentials.
const alnum = (n: number) => "aB3dE5gH7jK9mN1pQ2rS4tU6vW8xY0z".repeat(4).slice(0, n);
const ESC = "\u001b";

describe("a secret that control characters or escape sequences split", () => {
  it("is redacted: a terminal (or the TUI) that strips them would show it whole", () => {
    const token = `ghp_${alnum(36)}`;
    const cases = [
      // A zero-width space inside a token: invisible, and stripped before text is shown.
      [`the token is ghp_\u200b${alnum(36)} now`, token],
      // `grep --color=always DB_PASSWORD .env`: the match is coloured, the value follows.
      [`${ESC}[01;31m${ESC}[KDB_PASSWORD${ESC}[m${ESC}[K=hunter2-Secret!`, "hunter2-Secret!"],
      // `yq -C` / `jq -C`: keys and values coloured apart.
      [`${ESC}[36mpassword${ESC}[0m: ${ESC}[32mhunter2-Secret!${ESC}[0m\n${ESC}[36mport${ESC}[0m: 5432`, "hunter2-Secret!"],
      [`{${ESC}[1;34m"apiKey"${ESC}[0m: ${ESC}[0;32m"sk-${alnum(40)}"${ESC}[0m}`, `sk-${alnum(40)}`],
    ] as const;
    for (const [text, secret] of cases) {
      const redacted = redactText(text).text;
      expect(stripControls(redacted), JSON.stringify(text)).not.toContain(secret.slice(0, 12));
      expect(redacted).not.toContain(secret.slice(-8));
      expect(printable(text)).toContain(REDACTED);
    }
    // The context stays readable, and colours elsewhere stay as written.
    expect(stripControls(redactText(cases[2][0]).text)).toBe(`password: ${REDACTED}\nport: 5432`);
  });

  it("leaves coloured text with no secret as it is", () => {
    const text = `${ESC}[32m✓${ESC}[0m 12 tests passed\u200b in ${ESC}[1m3.2s${ESC}[0m; max_tokens: 4096`;
    expect(redactText(text)).toEqual({ text, changed: false });
  });
});
