import { describe, expect, test } from "vitest";
import { BoundedText } from "../../src/harnesses/cli/bounded-text.ts";
import { childEnvironment } from "../../src/harnesses/cli/env.ts";
import { LineSplitter } from "../../src/harnesses/cli/lines.ts";

describe("LineSplitter", () => {
  test("whole lines come out however the bytes were cut, also inside a UTF-8 character, CRLF or LF", () => {
    const lines: string[] = [];
    const splitter = new LineSplitter(1024, (line) => lines.push(line));
    const bytes = Buffer.from('{"a":"é✓"}\r\n\n{"b":2}\n{"c":', "utf8");
    for (const byte of bytes) splitter.push(Buffer.from([byte]));
    expect(lines).toEqual(['{"a":"é✓"}', '{"b":2}']);
    expect(splitter.end()).toBe('{"c":');
    expect(splitter.end()).toBeUndefined();
  });

  test("a line longer than the limit is refused as soon as it is too long, and nothing after it is read", () => {
    const lines: string[] = [];
    const splitter = new LineSplitter(8, (line) => lines.push(line));
    splitter.push(Buffer.from("short\n0123456"));
    expect(splitter.overflowed).toBe(false);
    splitter.push(Buffer.from("789"));
    expect(splitter.overflowed).toBe(true);
    splitter.push(Buffer.from("\nlater\n"));
    expect(lines).toEqual(["short"]);
    expect(splitter.end()).toBeUndefined();
  });
});

describe("BoundedText", () => {
  test("keeps the start and the end of a long stream and says how much was left out", () => {
    const text = new BoundedText(10, 10);
    text.push(Buffer.from("first line\n"));
    for (let index = 0; index < 100; index++) text.push(Buffer.from(`noise ${index}\n`));
    text.push(Buffer.from("last line\n"));
    const kept = text.text();
    expect(kept.startsWith("first line")).toBe(true);
    expect(kept.endsWith("last line\n")).toBe(true);
    expect(kept).toMatch(/\[… \d+ bytes left out …\]/);
    expect(kept).not.toContain("noise 50");
  });

  test("a short stream is kept whole, a character across the head and tail intact", () => {
    const text = new BoundedText(3, 100);
    text.push(Buffer.from("ab✓cd", "utf8"));
    expect(text.text()).toBe("ab✓cd");
  });
});

describe("childEnvironment", () => {
  test("passes the allowlist and the configured names and prefixes, nothing else", () => {
    const source = {
      PATH: "/bin",
      HOME: "/home/u",
      LC_ALL: "C",
      CLAUDE_CONFIG_DIR: "/cfg",
      AWS_SECRET_ACCESS_KEY: "secret",
      ANTHROPIC_API_KEY: "sk-ant",
      OPENAI_API_KEY: "sk-oa",
      OPENAI_ORG: "org",
      PI_FLOW_CLI_ENV: "ANTHROPIC_API_KEY, NOT-A-NAME",
      PI_FLOW_CODEX_ENV: "OPENAI_*",
    };
    expect(childEnvironment("claude", ["CLAUDE_CONFIG_DIR"], source)).toEqual({
      PATH: "/bin",
      HOME: "/home/u",
      LC_ALL: "C",
      CLAUDE_CONFIG_DIR: "/cfg",
      ANTHROPIC_API_KEY: "sk-ant",
    });
    expect(childEnvironment("codex", ["CODEX_HOME"], source)).toEqual({
      PATH: "/bin",
      HOME: "/home/u",
      LC_ALL: "C",
      ANTHROPIC_API_KEY: "sk-ant",
      OPENAI_API_KEY: "sk-oa",
      OPENAI_ORG: "org",
    });
  });
});
