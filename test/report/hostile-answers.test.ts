import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, test } from "vitest";
import { REPORT_TEXT_BYTES } from "../../src/report/collect.ts";
import { html } from "../../src/report/escape.ts";
import { runReport } from "../../src/report/index.ts";
import { openRunStore, RunRegistry } from "../../src/runs/index.ts";

/** What a child prompted by a hostile repository may answer: the report shows it as text, at a size it was given. */
let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

test("an answer of deeply nested brackets is shown as given, not indented into a page hundreds of times its size", async () => {
  dir = mkdtempSync(join(tmpdir(), "pi-flow-report-forged-"));
  const store = openRunStore({ home: join(dir, "home"), cwd: dir, sessionId: "s", registry: new RunRegistry() });
  const run = store.create({ kind: "agent", task: { description: "Answer in brackets" }, background: false });
  // 6 KB of answer, well inside the report's 64 KiB per text; indented, it was 18 MB.
  const answer = `${"[".repeat(3000)}${"]".repeat(3000)}`;
  run.settle({ outcome: "succeeded", value: answer });
  await store.idle();
  const page = runReport(store, run.runId);
  expect(page.length).toBeLessThan(40_000);
  expect(page).toContain(answer);
  // Shallow, but a long list of tiny values at depth 30: indented, 30 times its text.
  const wide = store.create({ kind: "agent", task: { description: "Answer in a wide list" }, background: false });
  const list = `${"[".repeat(30)}${Array(20_000).fill(0).join(",")}${"]".repeat(30)}`;
  wide.settle({ outcome: "succeeded", value: list });
  await store.idle();
  expect(runReport(store, wide.runId).length).toBeLessThan(200_000);
  // A value of ordinary depth is still indented for reading.
  const plain = store.create({ kind: "agent", task: { description: "Answer in JSON" }, background: false });
  plain.settle({ outcome: "succeeded", value: '{"files":[{"name":"a.ts","ok":true}]}' });
  await store.idle();
  expect(runReport(store, plain.runId)).toContain('{\n  &quot;files&quot;: [\n    {\n      &quot;name&quot;: &quot;a.ts&quot;');
});

test("terminal escapes and direction overrides in a run's text are dropped whole, C1 forms included: `flow runs report` may print the page to a terminal", async () => {
  dir = mkdtempSync(join(tmpdir(), "pi-flow-report-escapes-"));
  const store = openRunStore({ home: join(dir, "home"), cwd: dir, sessionId: "s", registry: new RunRegistry() });
  // A clear screen as an 8-bit CSI, a title set by OSC, a clipboard write by 8-bit OSC, a name shown reversed.
  const run = store.create({ kind: "agent", task: { description: "Review \u009b2J\u009b3Jthe \u202egpj.exe module" }, background: false });
  run.settle({ outcome: "succeeded", value: "Done.\u001b]0;pwned\u0007 Copied:\u009d52;c;ZWNobyBoaQ==\u009c fine" });
  await store.idle();
  const page = runReport(store, run.runId);
  expect(page).not.toMatch(/[\u0080-\u009f\u202a-\u202e\u2066-\u2069]/);
  expect(page).toContain("Review the gpj.exe module");
  expect(page).toContain("Done. Copied: fine");
});

test("a fan-out of long answers stays a page a browser opens: past the report's total, counted as escaped, later runs' texts are left out, and the header says so", async () => {
  dir = mkdtempSync(join(tmpdir(), "pi-flow-report-total-"));
  const store = openRunStore({ home: join(dir, "home"), cwd: dir, sessionId: "s", registry: new RunRegistry() });
  const workflow = store.create({ kind: "workflow", task: { description: "Fan out" }, background: false });
  // 60 children answering 64 KiB each: 3.75 MiB of answers (a workflow may start 4,096), inside
  // the total as given, of markup that is three times its size escaped (11.25 MiB), which the total counts.
  const answer = (index: number) => `Child ${index}: ${"<b>".repeat((REPORT_TEXT_BYTES - 20) / 3)}`;
  for (let index = 0; index < 60; index++) {
    const child = store.create({ kind: "agent", task: { description: `Child ${index}`, parentRunId: workflow.runId }, background: false });
    child.settle({ outcome: "succeeded", value: answer(index) });
  }
  workflow.settle({ outcome: "succeeded", value: { result: 60 } });
  await store.idle();
  const page = runReport(store, workflow.runId);
  expect(page.length).toBeLessThan(9 * 1024 * 1024); // 8 MiB of texts, and the page around them
  expect(page).toContain(html(answer(0)));
  expect(page).toContain("reached the report's limit (8 MiB): later runs show none");
  expect((page.match(/<tr class="run /g) ?? []).length).toBe(61);
});

test("answers indented for reading count against the report's total as the page holds them, indented: a fan-out of JSON answers stays a page a browser opens", async () => {
  dir = mkdtempSync(join(tmpdir(), "pi-flow-report-indented-"));
  const store = openRunStore({ home: join(dir, "home"), cwd: dir, sessionId: "s", registry: new RunRegistry() });
  const workflow = store.create({ kind: "workflow", task: { description: "Fan out for numbers" }, background: false });
  // 64 KiB of a shallow list, three and a half times its size indented (under the four times a
  // value may grow): 60 such answers are 3.8 MiB as given, well inside the 8 MiB total, and were a
  // 13.5 MiB page indented (a workflow may start 4,096: 28 MiB).
  const answer = `{"counts":[${Array(32_000).fill(0).join(",")}]}`;
  for (let index = 0; index < 60; index++) {
    const child = store.create({ kind: "agent", task: { description: `Count ${index}`, parentRunId: workflow.runId }, background: false });
    child.settle({ outcome: "succeeded", value: answer });
  }
  workflow.settle({ outcome: "succeeded", value: { result: 60 } });
  await store.idle();
  const page = runReport(store, workflow.runId);
  expect(page.length).toBeLessThan(9 * 1024 * 1024); // 8 MiB of texts, and the rows around them
  expect(page).toContain("reached the report's limit (8 MiB)");
  // The first answers are still indented for reading.
  expect(page).toContain("{\n  &quot;counts&quot;: [\n    0,\n    0,");
  expect((page.match(/<tr class="run /g) ?? []).length).toBe(61);
});

test("a child given a prompt longer than a launch page still shows its model and the conversation it continues", async () => {
  dir = mkdtempSync(join(tmpdir(), "pi-flow-report-long-prompt-"));
  const store = openRunStore({ home: join(dir, "home"), cwd: dir, sessionId: "s", registry: new RunRegistry() });
  const first = store.create({ kind: "agent", task: { description: "Read the evidence", harness: "pi" }, background: false, launch: { harness: "pi", model: "anthropic/claude-sonnet-4-5", prompt: "Read it." } });
  first.settle({ outcome: "succeeded", value: "Read." });
  // A handoff packet of 100 KB in the prompt, which the launch record keeps last, after the links.
  const packet = `Judge this evidence:\n${"src/parser.ts:12 accepts a trailing comma; ".repeat(2400)}`;
  const launch = { harness: "pi", model: "anthropic/claude-opus-4-1", timeoutMs: null, resume: first.runId, prompt: packet };
  const second = store.create({ kind: "agent", task: { description: "Judge the evidence", harness: "pi" }, background: false, launch });
  second.settle({ outcome: "succeeded", value: "Sound." });
  await store.idle();
  const page = runReport(store, second.runId);
  expect(page).toContain("model anthropic/claude-opus-4-1");
  expect(page).toContain(`continues the conversation of <code>${first.runId}</code>`);
});

test("a workflow's log and diagnostics longer than a page are shown one message a line up to the cut, its warnings among them, not as JSON", async () => {
  dir = mkdtempSync(join(tmpdir(), "pi-flow-report-long-log-"));
  const store = openRunStore({ home: join(dir, "home"), cwd: dir, sessionId: "s", registry: new RunRegistry() });
  const workflow = store.create({ kind: "workflow", task: { description: "Check every module" }, background: false });
  // 2,000 console.log lines and 1,000 warnings: about 190 KB and 110 KB of JSON entries, each past a 64 KiB page.
  for (let index = 0; index < 2000; index++) workflow.appendOutput(`step ${index}: checked module ${index}, "fine"`);
  for (let index = 0; index < 1000; index++) workflow.appendDiagnostic({ level: "warn", code: "slow_module", message: `module ${index} took long` });
  workflow.settle({ outcome: "succeeded", value: { result: 2000 } });
  await store.idle();
  const page = runReport(store, workflow.runId);
  const log = page.slice(page.indexOf("<h4>Log</h4>"), page.indexOf("<h4>Diagnostics</h4>"));
  expect(log).toContain("step 0: checked module 0, &quot;fine&quot;\nstep 1: checked module 1, &quot;fine&quot;\n");
  expect(log).not.toContain("&quot;text&quot;");
  expect(log).toContain("Cut at the report's limit");
  expect(page).toContain('<li class="warn">warn [slow_module]: module 0 took long</li>');
  // One message longer than a page has no whole entry in it: what the page holds is still shown, cut.
  const chatty = store.create({ kind: "workflow", task: { description: "Log one long line" }, background: false });
  chatty.appendOutput(`one line: ${"x".repeat(100_000)}`);
  chatty.settle({ outcome: "succeeded", value: { result: 1 } });
  await store.idle();
  const long = runReport(store, chatty.runId);
  expect(long.slice(long.indexOf("<h4>Log</h4>"))).toMatch(/^<h4>Log<\/h4><details class="fold">[\s\S]*one line: xxx[\s\S]*Cut at the report's limit/);
});

test("a child whose diagnostics are longer than a page says so where they are listed: its last error may be past the cut", async () => {
  dir = mkdtempSync(join(tmpdir(), "pi-flow-report-long-diagnostics-"));
  const store = openRunStore({ home: join(dir, "home"), cwd: dir, sessionId: "s", registry: new RunRegistry() });
  const child = store.create({ kind: "agent", task: { description: "Build it" }, background: false });
  for (let index = 0; index < 1000; index++) child.appendDiagnostic({ level: "info", code: "retry", message: `the provider was busy: attempt ${index}` });
  child.appendDiagnostic({ level: "error", code: "provider_error", message: "the provider gave up" });
  child.settle({ outcome: "failed", error: { code: "failed", message: "the provider gave up" } });
  await store.idle();
  const page = runReport(store, child.runId);
  expect(page).toContain(`<h4>Diagnostics</h4><p class="note">More diagnostics than the report carries: <code>flow runs show ${child.runId} --view diagnostics</code> pages them all.</p>`);
});

test("the run reported on shows its whole answer past 64 KiB, as the receipts of a session not saved to a file promise; its children's stay cut", async () => {
  dir = mkdtempSync(join(tmpdir(), "pi-flow-report-whole-answer-"));
  const store = openRunStore({ home: join(dir, "home"), cwd: dir, sessionId: "s", registry: new RunRegistry() });
  // 200 KB: "too large to inline (over 16 KiB) … a person reads it with /flow report <runId>".
  const answer = `${"The parser accepts a trailing comma where the grammar forbids it. ".repeat(3000)}The end.`;
  const run = store.create({ kind: "agent", task: { description: "Review the parser" }, background: false });
  run.settle({ outcome: "succeeded", value: answer });
  const workflow = store.create({ kind: "workflow", task: { description: "Review twice" }, background: false });
  const child = store.create({ kind: "agent", task: { description: "Review again", parentRunId: workflow.runId }, background: false });
  child.settle({ outcome: "succeeded", value: answer });
  workflow.settle({ outcome: "succeeded", value: { result: 1 } });
  await store.idle();
  const page = runReport(store, run.runId);
  expect(page).toContain("forbids it. The end.</pre>");
  expect(page).not.toContain("Cut at the report's limit");
  const fanOut = runReport(store, workflow.runId);
  expect(fanOut).not.toContain("The end.");
  expect(fanOut).toContain("Cut at the report's limit");
  // 2 MiB of quotes is 12 MiB escaped: the answer stops where the report's 8 MiB total does.
  const quotes = store.create({ kind: "agent", task: { description: "Quote it" }, background: false });
  quotes.settle({ outcome: "succeeded", value: '"'.repeat(2 * 1024 * 1024) });
  await store.idle();
  const quoted = runReport(store, quotes.runId);
  expect(quoted.length).toBeLessThan(9 * 1024 * 1024);
  expect(quoted).toContain("Cut at the report's limit");
});

test("a fan-out of long failures and long calls tables stays within the report's total too: errors and calls past it are left out, and the header says so", async () => {
  dir = mkdtempSync(join(tmpdir(), "pi-flow-report-failures-"));
  const store = openRunStore({ home: join(dir, "home"), cwd: dir, sessionId: "s", registry: new RunRegistry() });
  const root = store.create({ kind: "workflow", task: { description: "Fan out and fail" }, background: false });
  // An error keeps 8,192 characters of its message: 200 children failing so are 1.6 MiB of errors, shown twice each.
  const failure = (index: number) => `Child ${index} failed: ${"the build broke again. ".repeat(360)}`;
  for (let index = 0; index < 200; index++) {
    const child = store.create({ kind: "agent", task: { description: `Child ${index}`, parentRunId: root.runId }, background: false });
    child.settle({ outcome: "failed", error: { code: "failed", message: failure(index) } });
  }
  // 8 nested workflows whose calls views hold a refused agent() call of 8 KiB each, 1 MiB of calls apiece.
  const refusal = (index: number) => `Call ${index} refused: ${"no such role in this project. ".repeat(280)}`;
  for (let nested = 0; nested < 8; nested++) {
    const workflow = store.create({ kind: "workflow", task: { description: `Nested ${nested}`, parentRunId: root.runId }, background: false });
    for (let index = 0; index < 140; index++) {
      workflow.journal({ t: "event", name: "agent_rejected", data: { index, target: "ghost", description: `Call ${index}`, code: "request_invalid", message: refusal(index) } });
    }
    workflow.settle({ outcome: "succeeded", value: { result: nested } });
  }
  root.settle({ outcome: "failed", error: { code: "failed", message: "children failed" } });
  await store.idle();
  const page = runReport(store, root.runId);
  expect(page.length).toBeLessThan(9 * 1024 * 1024); // 8 MiB of texts, and the rows around them
  expect(page).toContain("reached the report's limit (8 MiB)");
  expect((page.match(/<tr class="run /g) ?? []).length).toBe(209);
  // Each run's row still says how it failed, in one line's worth of its message.
  expect((page.match(/<td class="name"[^\n]*<div class="error">failed: Child \d+ failed: the build/g) ?? []).length).toBe(200);
}, 60_000);
