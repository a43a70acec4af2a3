import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionManager } from "@earendil-works/pi-coding-agent";
import { fauxAssistantMessage, fauxText } from "@earendil-works/pi-ai";
import { afterEach, beforeEach, expect, test } from "vitest";
import { ChildSessionFile, resumedSessionManager, TRANSCRIPT_MAX_BYTES } from "../../src/harnesses/pi-session-file.ts";

let dir: string;
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "pi-flow-session-file-"))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const userMessage = (text: string) => ({ role: "user" as const, content: text, timestamp: Date.now() });

test("writes nothing before the conversation, then the header and each new entry once; Pi reads it back whole", () => {
  const manager = SessionManager.inMemory(dir);
  const path = join(dir, "session.jsonl");
  const file = new ChildSessionFile(manager, path);
  const errors: string[] = [];
  manager.appendThinkingLevelChange("off");
  file.flush((message) => errors.push(message));
  expect(() => readFileSync(path)).toThrow(); // setup entries alone leave no file, as Pi does
  manager.appendMessage(userMessage("first question"));
  manager.appendMessage(fauxAssistantMessage([fauxText("first answer")]));
  file.flush((message) => errors.push(message));
  manager.appendMessage(userMessage("second question"));
  file.close((message) => errors.push(message));
  expect(errors).toEqual([]);
  const reopened = SessionManager.open(path);
  expect(reopened.getHeader()?.id).toBe(manager.getHeader()?.id);
  expect(reopened.getEntries()).toEqual(manager.getEntries());
});

test("a file that cannot be written is reported once and the child goes on", () => {
  const manager = SessionManager.inMemory(dir);
  const file = new ChildSessionFile(manager, join(dir, "gone", "session.jsonl"));
  const errors: string[] = [];
  manager.appendMessage(userMessage("question"));
  file.flush((message) => errors.push(message));
  manager.appendMessage(userMessage("more"));
  file.close((message) => errors.push(message));
  expect(errors).toEqual(["The child's Pi session could not be saved (ENOENT); it cannot be resumed."]);
});

test("every entry is written redacted, and a resumed session is a redacted copy of an earlier one that was not", () => {
  const secret = "sk-ant-api03-" + "Xq7Lp2Vn9Rt4Wb6Yc1Hd8Jf3Kg5Mz0Ns-AA";
  const manager = SessionManager.inMemory(dir);
  const path = join(dir, "session.jsonl");
  const file = new ChildSessionFile(manager, path);
  manager.appendMessage(userMessage(`deploy with ANTHROPIC_API_KEY=${secret}`));
  manager.appendMessage(fauxAssistantMessage([fauxText(`Using ${secret} now.`)]));
  file.close(() => undefined);
  const written = readFileSync(path, "utf8");
  expect(written).not.toContain(secret);
  expect(written).toContain("Using [REDACTED] now.");

  // A transcript kept raw (before transcripts were redacted) is redacted when a child resumes it.
  const raw = SessionManager.inMemory(dir);
  raw.appendMessage(userMessage(`the key is ${secret}`));
  const rawPath = join(dir, "raw.jsonl");
  writeFileSync(rawPath, [raw.getHeader(), ...raw.getEntries()].map((entry) => JSON.stringify(entry)).join("\n") + "\n");
  const resumed = resumedSessionManager(rawPath, dir);
  expect(resumed.getHeader()?.parentSession).toBe(rawPath);
  expect(JSON.stringify(resumed.buildSessionContext().messages)).toContain("the key is [REDACTED]");
  expect(JSON.stringify(resumed.getEntries())).not.toContain(secret);
});

test("an earlier transcript that is empty, or larger than a transcript may be, is refused as run_unavailable before it is read", () => {
  const empty = join(dir, "empty.jsonl");
  writeFileSync(empty, "");
  expect(() => resumedSessionManager(empty, dir)).toThrow(expect.objectContaining({ code: "run_unavailable", message: expect.stringContaining("has no entries") }));
  // Sparse: the size says it all, and not a byte of it is read.
  const huge = join(dir, "huge.jsonl");
  writeFileSync(huge, "");
  truncateSync(huge, TRANSCRIPT_MAX_BYTES + 1);
  expect(() => resumedSessionManager(huge, dir)).toThrow(expect.objectContaining({ code: "run_unavailable", message: expect.stringContaining("is over 64 MiB") }));
});

test("a secret a command printed goes from the result that holds its output, written in a later flush, and from a resumed copy", () => {
  const password = "Tr0ub4dor&3-horse";
  const call = (id: string, command: string) => ({ ...fauxAssistantMessage([fauxText("running it")]), content: [{ type: "toolCall" as const, id, name: "bash", arguments: { command } }] });
  const result = (id: string, text: string) => ({ role: "toolResult" as const, toolCallId: id, toolName: "bash", content: [{ type: "text" as const, text }], isError: false, timestamp: Date.now() });
  const manager = SessionManager.inMemory(dir);
  const path = join(dir, "session.jsonl");
  const file = new ChildSessionFile(manager, path);
  manager.appendMessage(userMessage("fetch the password"));
  manager.appendMessage(call("call_1", "vault kv get -field=password secret/db"));
  file.flush(() => undefined); // the call is written before its result exists
  manager.appendMessage(result("call_1", `${password}\n`));
  manager.appendMessage(call("call_2", "terraform output -raw vpc_id"));
  manager.appendMessage(result("call_2", "vpc-0abc123def4567890\n"));
  file.close(() => undefined);
  const written = readFileSync(path, "utf8");
  expect(written).not.toContain(password.slice(0, 8));
  expect(written).toContain("vpc-0abc123def4567890");

  const raw = join(dir, "raw.jsonl");
  writeFileSync(raw, [manager.getHeader(), ...manager.getEntries()].map((entry) => JSON.stringify(entry)).join("\n") + "\n");
  const resumed = JSON.stringify(resumedSessionManager(raw, dir).getEntries());
  expect(resumed).not.toContain(password.slice(0, 8));
  expect(resumed).toContain("vpc-0abc123def4567890");
});
