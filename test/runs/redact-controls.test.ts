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

describe("an invisible format character inside a secret", () => {
  // Word joiner, invisible operators, BOM, soft hyphen, Mongolian vowel separator, deprecated format
  // characters, a tag character, an annotation mark, the grapheme joiner, Hangul fillers, variation selectors.
  const invisible = ["\u2060", "\u2062", "\u2064", "\ufeff", "\u00ad", "\u180e", "\u206a", "\u206f", "\u{e0041}", "\u{e007f}", "\ufff9", "\ufffb", "\u034f", "\u115f", "\u1160", "\u3164", "\uffa0", "\ufe00", "\ufe0f", "\u{e0100}", "\u{e01ef}"];

  it("does not hide it: the secret goes whole, and nothing invisible is left on screen", () => {
    for (const unit of invisible) {
      const token = `ghp_${alnum(10)}${unit}${alnum(36).slice(10)}`;
      const text = `the token is ${token} now`;
      expect(printable(text), JSON.stringify(unit)).toBe(`the token is ${REDACTED} now`);
      const password = `Tr0ub4dor${unit}&3-horse`;
      expect(printable(`DB_PASSWORD=${password}\nport=5432`), JSON.stringify(unit)).toBe(`DB_PASSWORD=${REDACTED}\nport=5432`);
    }
  });

  it("is taken out of what is shown, and a Hangul filler shows as the space it looks like", () => {
    expect(stripControls("pay\u2060ment \u00adinvoice\ufeff \u206anote\u{e0041}\u{e0042}\ufff9x\ufffb")).toBe("payment invoice notex");
    expect(stripControls("first\u3164second\u115fthird")).toBe("first second third");
  });

  it("leaves emoji and scripts as written: joiners, variation selectors and a flag's tags stay", () => {
    const text = "👍🏽 ❤️ 👨‍👩‍👧 🏴\u{e0067}\u{e0062}\u{e0073}\u{e0063}\u{e0074}\u{e007f} 1️⃣ 葛\u{e0100} می‌خواهم ᠠ\u180bᠡ; max_tokens: 4096";
    expect(redactText(text)).toEqual({ text, changed: false });
    expect(stripControls(text)).toBe(text);
  });
});

describe("a secret split by a control character written escaped", () => {
  it("is redacted: a colour code in a JSON string (\\u001b[31m) decodes to one a display strips", () => {
    const token = `ghp_${alnum(36)}`;
    for (const escaped of ["\\u001b[31m", "\\u001b[0m\\u001b[K", "\\u0007", "\\u2060"]) {
      const line = `{"output": "pushed with ${token.slice(0, 14)}${escaped}${token.slice(14)} to origin"}`;
      const redacted = redactText(line).text;
      const shown = stripControls((JSON.parse(redacted) as { output: string }).output);
      expect(shown, escaped).toBe(`pushed with ${REDACTED} to origin`);
    }
  });
});
