import { delimiter } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, test } from "vitest";
import { BoundedText } from "../../src/harnesses/cli/bounded-text.ts";
import { claudeAdapter } from "../../src/harnesses/cli/claude.ts";
import { childEnvironment, pathOf, withUntrustedGitConfig } from "../../src/harnesses/cli/env.ts";
import { argsLine } from "../../src/harnesses/cli/guards.ts";
import { LineSplitter } from "../../src/harnesses/cli/lines.ts";
import { zeroUsage } from "../../src/harnesses/usage.ts";

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

  test("a line written a byte at a time holds about its own size, not a buffer object per byte", () => {
    setFlagsFromString("--expose-gc");
    const collectGarbage = runInNewContext("gc") as () => void;
    const held = () => {
      collectGarbage();
      const { heapUsed, arrayBuffers } = process.memoryUsage();
      return heapUsed + arrayBuffers;
    };
    const lines: string[] = [];
    const splitter = new LineSplitter(32 * 1024 * 1024, (line) => lines.push(line));
    const before = held();
    const byte = Buffer.from("é").subarray(0, 1);
    const rest = Buffer.from("é").subarray(1);
    // 500 000 characters of two bytes each, each byte its own write: about 1 MB of line.
    for (let index = 0; index < 500_000; index++) {
      splitter.push(byte);
      splitter.push(rest);
    }
    // Before, each byte was a Buffer of its own: some 100 MB for this one line, gigabytes for one of 32 MiB.
    expect(held() - before).toBeLessThan(8 * 1024 * 1024);
    splitter.push(Buffer.from("\nnext\n"));
    expect(lines).toEqual(["é".repeat(500_000), "next"]);
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

  const KEY = "sk-ant-api03-Xy7Qp2Lm9Rt4Vn8Bc3Df6Gh1Jk5Mn0Pq7Rs2Tu9Vw4Xz8Ab3Cd6Ef1Gh5Ij0Kl7Mn2Op9Qr4St8Uv3Wx6Yz1-AbCdEfAA";
  /** Whether any ten characters in a row of the key's body are in `text`. */
  const holdsPieceOfKey = (text: string) => {
    const body = KEY.slice("sk-ant-api03-".length);
    return Array.from({ length: body.length - 9 }, (_, at) => body.slice(at, at + 10)).some((piece) => text.includes(piece));
  };

  test("a key the head's end or the tail's start cuts through leaves no piece of itself", () => {
    const line = `ANTHROPIC_API_KEY=${KEY}`;
    for (let inside = 2; inside < line.length - 1; inside += 3) {
      const cutHead = new BoundedText(6 + inside, 20);
      cutHead.push(Buffer.from(`auth: ${line} was refused\n${"at frame\n".repeat(40)}exit\n`));
      expect(holdsPieceOfKey(cutHead.text())).toBe(false);
      expect(cutHead.text()).toMatch(/^auth: \n\[… \d+ bytes left out …\]/);

      const ending = " was refused\n";
      const cutTail = new BoundedText(20, ending.length + inside);
      cutTail.push(Buffer.from(`start\n${"at frame\n".repeat(40)}${line}${ending}`));
      expect(holdsPieceOfKey(cutTail.text())).toBe(false);
      expect(cutTail.text().endsWith(ending)).toBe(true);
    }
  });

  test("a head that fills exactly at a chunk's end still drops the word the cut went through", () => {
    const text = new BoundedText(14, 20);
    text.push(Buffer.from("error: token "));
    text.push(Buffer.from("g")); // the head is full here, its last byte the token's first
    text.push(Buffer.from(`hp_a1B2c3D4e5F6g7H8i9J0k1L2m3n4o5p6q7 ${"at frame\n".repeat(20)}end\n`));
    expect(text.text()).toMatch(/^error: token \n\[… \d+ bytes left out …\]/);
  });

  test("the text is redacted, and the last lines are cut from the redacted text", () => {
    const text = new BoundedText(10_000, 10_000);
    text.push(Buffer.from(`API Error: 401 invalid x-api-key ANTHROPIC_API_KEY=${KEY}\n`));
    for (let frame = 1; frame <= 7; frame++) text.push(Buffer.from(`    at processTicksAndRejections (node:internal/process/task_queues:95:5) #${frame}\n`));
    expect(text.text()).toContain("[REDACTED]");
    expect(holdsPieceOfKey(text.text())).toBe(false);
    for (const maxChars of [560, 600, 640, 700]) expect(holdsPieceOfKey(text.lastLines(maxChars))).toBe(false);
  });

  test("a stream written a byte at a time is kept without copying the tail at every byte: the host is not held", () => {
    const text = new BoundedText(32 * 1024, 32 * 1024);
    const started = performance.now();
    for (let index = 0; index < 400_000; index++) text.push(Buffer.from(index % 80 === 79 ? "\n" : "x"));
    text.push(Buffer.from("the end\n"));
    expect(performance.now() - started).toBeLessThan(3000); // copying the tail at each byte took 6 to 8 s
    const kept = text.text();
    expect(kept).toMatch(/\[… \d+ bytes left out …\]/);
    expect(kept.endsWith("the end\n")).toBe(true);
    expect(Buffer.byteLength(kept)).toBeLessThan(64 * 1024 + 100);
  });

  test("a short stream is kept whole, a character across the head and tail intact", () => {
    const text = new BoundedText(3, 100);
    text.push(Buffer.from("ab✓cd", "utf8"));
    expect(text.text()).toBe("ab✓cd");
  });
});

describe("argsLine", () => {
  test("a tool call's huge input (a 16 MiB file written) is shown from a bounded window: the host is not held redacting all of it, and a secret at its start or a key running past the window is still redacted", () => {
    const body = "const value = computeSomething(alpha, beta);\n".repeat((16 * 1024 * 1024) / 45);
    const token = `ghp_${"R8xK2mQ7vN4pL9tZ3wYb".repeat(2).slice(0, 36)}`;
    const started = performance.now();
    const line = argsLine({ file_path: "/w/a.ts", content: `// ${token}\n${body}` });
    expect(performance.now() - started).toBeLessThan(1000); // redacting all 16 MiB took about 4 s on a 2-CPU machine
    expect(line).not.toContain(token.slice(4, 14));
    expect(line).toMatch(/… \(more than 2000 chars\)$/);
    const key = `-----BEGIN PRIVATE KEY-----\n${"MIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n".repeat(4000)}-----END PRIVATE KEY-----\n`;
    expect(argsLine({ content: `x\n${key}` })).not.toContain("MIIEvQIBADANBgkqhkiG9w0BAQEFAASC");
  });


  test("redacts a command before it cuts it, so a token across the cut leaves no piece", () => {
    const token = `ghp_${"R8xK2mQ7vN4pL9tZ3wYb".repeat(2).slice(0, 36)}`;
    for (let before = 1980; before < 2000; before += 3) {
      const line = argsLine(`${"x".repeat(before)} ${token} done`);
      expect(line).not.toContain(token.slice(4, 14));
    }
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

describe("an untrusted project's CLI child's git configuration", () => {
  test("comes after the entries the user passes (PI_FLOW_CLI_ENV=GIT_CONFIG_*), which it keeps", () => {
    const given = childEnvironment("claude", [], { PI_FLOW_CLI_ENV: "GIT_CONFIG_*", GIT_CONFIG_COUNT: "1", GIT_CONFIG_KEY_0: "http.proxy", GIT_CONFIG_VALUE_0: "http://proxy:3128", PATH: "/usr/bin" });
    expect(withUntrustedGitConfig(given)).toEqual({
      PATH: "/usr/bin",
      GIT_CONFIG_COUNT: "3",
      GIT_CONFIG_KEY_0: "http.proxy",
      GIT_CONFIG_VALUE_0: "http://proxy:3128",
      GIT_CONFIG_KEY_1: "core.fsmonitor",
      GIT_CONFIG_VALUE_1: "false",
      GIT_CONFIG_KEY_2: "core.hooksPath",
      GIT_CONFIG_VALUE_2: "/dev/null",
    });
    expect(withUntrustedGitConfig({ GIT_CONFIG_COUNT: "lots" })).toMatchObject({ GIT_CONFIG_COUNT: "2", GIT_CONFIG_KEY_0: "core.fsmonitor" });
  });
});

describe("a CLI child's PATH", () => {
  test("keeps only absolute entries: a relative one (., node_modules/.bin, an empty one) would find commands in the project", () => {
    const env = childEnvironment("claude", [], { PATH: ["node_modules/.bin", ".", "", "/usr/local/bin", "bin", "/usr/bin"].join(delimiter), HOME: "/home/u" });
    expect(env).toEqual({ PATH: ["/usr/local/bin", "/usr/bin"].join(delimiter), HOME: "/home/u" });
  });
});

describe("a CLI child's PATH on Windows", () => {
  test("is found under any case (Windows names it Path) and keeps its absolute entries; elsewhere only PATH is PATH", () => {
    const source = { Path: ["C:\\Windows\\system32", ".", "node_modules\\.bin", "D:\\tools"].join(";"), SystemRoot: "C:\\Windows", PaTh_SECRET: "x" };
    expect(childEnvironment("codex", [], source, "win32")).toEqual({ Path: "C:\\Windows\\system32;D:\\tools", SystemRoot: "C:\\Windows" });
    expect(pathOf(source, "win32")).toBe(source.Path);
    expect(childEnvironment("codex", [], { Path: "/usr/bin", HOME: "/home/u" }, "linux")).toEqual({ HOME: "/home/u" });
    expect(pathOf({ Path: "/usr/bin" }, "linux")).toBeUndefined();
  });
});

describe("claude's stream reader", () => {
  test("a stream of 20 000 model responses is read in one pass: the totals keep up without holding the host", () => {
    const usage = zeroUsage();
    const reader = claudeAdapter.reader({ usage, progress: () => undefined, output: () => undefined, diagnostic: () => undefined, session: () => undefined });
    const assistant = (id: string, output: number) => ({ type: "assistant", parent_tool_use_id: null, message: { id, content: [], usage: { input_tokens: 2, output_tokens: output } } });
    // Summed again at each message, this took over a minute on a 2-CPU machine; read once, well under a second.
    const started = performance.now();
    for (let index = 0; index < 20_000; index++) {
      reader.onEvent(assistant(`msg_${index}`, 1));
      reader.onEvent(assistant(`msg_${index}`, 3)); // the same response again: its usage replaced, not added
    }
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(usage).toMatchObject({ turns: 20_000, inputTokens: 40_000, outputTokens: 60_000 });
  });
});
