/**
 * A Pi session not saved to a file (`pi --no-session`, SessionManager.inMemory()): external_runs
 * refuses it (session_unavailable), so nothing may send the model, a script or a person there.
 */
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fauxAssistantMessage, fauxText, fauxToolCall, type FauxResponseStep } from "@earendil-works/pi-ai";
import { childAnswers, childAnswersWhenReleased, childHangs, seenBy } from "../support/children.ts";
import { gitIn, writeIn } from "../support/git-repo.ts";
import { startPiSession, type PiTestSession } from "../support/pi-session.ts";
import { recordingUi } from "../support/recording-ui.ts";
import { completionRow, seen, theme, toolRow } from "../ui/views.ts";
import type { RunView } from "../../src/contract/run-schema.ts";
import { openRunStore } from "../../src/runs/index.ts";

let pi: PiTestSession;
beforeEach(async () => {
  pi = await startPiSession({ persisted: false });
});
afterEach(() => pi.dispose());

const big = "y".repeat(17_000);

describe("a workflow script", () => {
  test("readFinal() of a tools.external_delegate answer over 16 KiB says it cannot be paged here and what works: agent() returns the whole value", async () => {
    const script = [
      "export const apiVersion = 1;",
      'export const meta = { name: "big", description: "d", tools: ["external_delegate"] };',
      'const delegated = await tools.external_delegate({ role: "worker", description: "d", prompt: "p", context: { mode: "none" } });',
      "let refused;",
      "try { await readFinal(delegated.data.run); } catch (error) { refused = { code: error.code, message: error.message }; }",
      'const child = await agent({ role: "worker", description: "a", prompt: "p", context: { mode: "none" } });',
      "return { delivery: delegated.data.run.output.delivery, refused, whole: child.value.length };",
    ].join("\n");
    const result = await pi.callTool("external_workflow", { script }, { children: [childAnswers(big), childAnswers(big)] });
    const value = (result.structuredContent as { data: { run: { output: { value: { delivery: string; refused: { code: string; message: string }; whole: number } } } } }).data.run.output.value;
    expect(value.delivery).toBe("reference");
    expect(value.refused.code).toBe("session_unavailable");
    expect(value.refused.message).toMatch(/not saved to a file/);
    expect(value.refused.message).toMatch(/agent\(\)/);
    expect(value.whole).toBe(big.length);
  });

  test("a wait on a background delegation is refused with the advice that works in a script: agent(), not a completion message it never sees", async () => {
    const script = [
      "export const apiVersion = 1;",
      'export const meta = { name: "waits", description: "d", tools: ["external_delegate"] };',
      'const started = await tools.external_delegate({ role: "worker", description: "d", prompt: "p", context: { mode: "none" }, background: true });',
      "const waited = await tools.external_runs({ action: \"wait\", runIds: [started.data.run.runId] });",
      "return waited.error;",
    ].join("\n");
    const result = await pi.callTool("external_workflow", { script }, { children: [childAnswers("done")] });
    const error = (result.structuredContent as { data: { run: { output: { value: { code: string; message: string } } } } }).data.run.output.value;
    expect(error.code).toBe("session_unavailable");
    expect(error.message).toMatch(/agent\(\)/);
    expect(error.message).not.toMatch(/completion message/);
  });
});

/** What the last `/flow` printed: the session entry the transcript draws. */
async function flow(args: string): Promise<string> {
  await pi.session.prompt(`/flow ${args}`);
  const last = pi.session.sessionManager.getEntries().filter((entry) => entry.type === "custom" && entry.customType === "pi-flow-output").at(-1) as { data: { lines: string[] } };
  return last.data.lines.join("\n");
}

const worker = { role: "worker", description: "Write a lot", prompt: "p", context: { mode: "none" } };

describe("what a person sees of an answer over 16 KiB", () => {
  test("the tool row, the completion message and /flow runs inspect point to /flow report, which shows it, never to external_runs", async () => {
    const foreground = await pi.callTool("external_delegate", worker, { children: [childAnswers(big)] });
    const runId = (foreground.structuredContent as { data: { run: RunView } }).data.run.runId;
    const definition = pi.session.getToolDefinition("external_delegate")!;
    const row = seen(toolRow("external_delegate", definition, worker, [{ details: foreground.details, text: foreground.text }], true), 120);
    expect(row).toContain("over 16 KiB");
    expect(row).not.toMatch(/external_runs/);
    expect(row).toContain(`/flow report ${runId}`);

    const completions = () => pi.session.messages.filter((m) => (m as { customType?: string }).customType === "pi-flow-run-completed");
    await pi.callTool("external_delegate", { ...worker, background: true }, { children: [childAnswers(big)] });
    await expect.poll(() => completions().length).toBe(1);
    const completion = seen(completionRow((completions()[0] as unknown as { details: RunView }).details, true), 120);
    expect(completion).toContain("over 16 KiB");
    expect(completion).not.toMatch(/external_runs/);
    expect(completion).toContain("/flow report ");

    const inspected = await flow(`runs ${runId} inspect`);
    expect(inspected).toContain("over 16 KiB");
    expect(inspected).not.toMatch(/external_runs/);
    expect(inspected).toContain(`/flow report ${runId}`);
    // A long answer inline is cut in the row: the rest is one /flow command away, not an external_runs call.
    const long = await pi.callTool("external_delegate", worker, { children: [childAnswers(Array.from({ length: 30 }, (_, line) => `line ${line}`).join("\n"))] });
    const longRow = seen(toolRow("external_delegate", definition, worker, [{ details: long.details, text: long.text }], true), 120);
    const longId = (long.structuredContent as { data: { run: RunView } }).data.run.runId;
    expect(longRow).not.toMatch(/external_runs/);
    expect(longRow).toContain(`10 more lines (/flow runs ${longId} inspect shows them all)`);
    expect(await flow(`runs ${longId} inspect`)).toContain("line 29");

    // The model is told the same: a person reads it with /flow report (a session saved later could not page this run).
    expect(foreground.text).toContain(`a person reads it with /flow report ${runId}`);
    expect(foreground.text).not.toMatch(/persisted to page it/);
    expect((completions()[0] as unknown as { content: string }).content).toMatch(/a person reads it with \/flow report ag_\w+/);
    // Followed, the advice works: the report holds the whole answer.
    const report = await flow(`report ${runId}`);
    const file = /written to (\S+)/.exec(report)![1]!;
    expect(existsSync(file)).toBe(true);
    expect(readFileSync(file, "utf8")).toContain(big);
  });
});

/** A writer of parallel-edit: writes its task, as the file's whole content, into its path; then says so. */
const writer: FauxResponseStep = (context) => {
  const [, path, task] = /Edit (\S+), and no other file: ([^\n]*)/.exec(seenBy(context.messages).user) ?? [];
  if (!context.messages.some((message) => message.role === "toolResult")) {
    return fauxAssistantMessage([fauxToolCall("write", { path: path!, content: `${task}\n` })], { stopReason: "toolUse" });
  }
  return fauxAssistantMessage([fauxText(`Wrote ${path}.`)]);
};

describe("the shipped parallel-edit", () => {
  test("does not claim its writers left nothing to apply when external_runs apply is refused: it says their changes are kept and /flow apply lands them", async () => {
    await pi.dispose();
    const ui = recordingUi(theme);
    pi = await startPiSession({ persisted: false, ui: ui.context, mode: "tui" });
    gitIn(pi.cwd, "init", "-q", "-b", "main");
    writeIn(pi.cwd, { ".gitignore": ".agent/\n.flow-home/\n", "a.txt": "old\n" });
    gitIn(pi.cwd, "add", "-A");
    gitIn(pi.cwd, "commit", "-q", "-m", "initial");
    const result = await pi.callTool("external_workflow", { workflow: "parallel-edit", args: { edits: [{ path: "a.txt", task: "new" }] } }, { children: [writer, writer] });
    const value = (result.structuredContent as { data: { run: { output: { value: Record<string, unknown[]> } } } }).data.run.output.value;
    expect(value.unchanged).toEqual([]);
    expect(value.notApplied).toEqual([{ path: "a.txt", runId: expect.any(String) }]);
    expect(value.applyRefused).toMatch(/^session_unavailable: .*\/flow apply ag_\w+ lands them\.$/);
    expect(readFileSync(join(pi.cwd, "a.txt"), "utf8")).toBe("old\n");
    const runId = (value.notApplied as { runId: string }[])[0]!.runId;
    // Followed, the advice works: /flow apply lands the kept change once the person says yes.
    ui.answers.push(true);
    expect(await flow(`apply ${runId}`)).toMatch(/applied/);
    expect(readFileSync(join(pi.cwd, "a.txt"), "utf8")).toBe("new\n");
  });
});

describe("background runs that settle together", () => {
  test("each one's answer reaches the model: answers past one message's 32 KiB go in the next message, since external_runs cannot page them here", async () => {
    const answers = ["a", "b", "c"].map((letter) => letter.repeat(15_000));
    const store = openRunStore({ home: pi.flowHome, cwd: pi.cwd, sessionId: pi.session.sessionManager.getSessionId() });
    const settled = () => store.list({ limit: 10 }).runs.filter((run) => run.state.status === "done" && run.background).length;
    // The foreground child answers once the three background runs settled, so all three settle while the parent is busy.
    const lastChild: FauxResponseStep = async () => {
      await expect.poll(settled).toBe(3);
      return fauxAssistantMessage([fauxText("foreground done")]);
    };
    const messages: { customType: string; content: string }[] = [];
    pi.session.subscribe((event) => {
      const message = event.type === "message_end" ? (event.message as { role: string; customType?: string; content?: unknown }) : undefined;
      if (message?.role === "custom" && message.customType?.startsWith("pi-flow-run")) messages.push({ customType: message.customType, content: String(message.content) });
    });
    await pi.runCodemode(
      `const worker = { role: "worker", prompt: "p", context: { mode: "none" } };
       for (let i = 0; i < 3; i++) await tools.external_delegate({ ...worker, description: "b" + i, background: true });
       return (await tools.external_delegate({ ...worker, description: "fg" })).ok;`,
      { children: [...answers.map((answer) => childAnswers(answer)), lastChild] },
    );
    const text = () => messages.map((message) => message.content).join("\n");
    await expect.poll(() => text().match(/Background run \S+ finished/g)?.length ?? 0).toBe(3);
    expect(messages.some((message) => message.customType === "pi-flow-runs-completed")).toBe(true);
    expect(text()).not.toMatch(/did not fit/);
    for (const answer of answers) expect(text()).toContain(answer);
    for (const message of messages) expect(Buffer.byteLength(message.content)).toBeLessThanOrEqual(32 * 1024 + 1024);
  });
});

describe("refusals while a run goes", () => {
  test("a resume of a live run and a background launch past the queue say what works here, not external_runs: resume once it ended, delegate again once some ended", async () => {
    await pi.dispose();
    pi = await startPiSession({ persisted: false, env: { PI_FLOW_MAX_BACKGROUND: "1", PI_FLOW_MAX_QUEUED: "0" } });
    const gated = childAnswersWhenReleased("first done");
    const first = await pi.callTool("external_delegate", { ...worker, background: true }, { children: [gated.step] });
    const runId = (first.structuredContent as { data: { run: RunView } }).data.run.runId;
    await gated.started;
    const resumed = await pi.callTool("external_delegate", { ...worker, resume: runId });
    expect(resumed.text).toContain("request_invalid");
    expect(resumed.text).toContain("still live");
    expect(resumed.text).not.toMatch(/external_runs \{/);
    expect(resumed.text).toMatch(/completion message/);
    const second = await pi.callTool("external_delegate", { ...worker, background: true });
    expect(second.text).toContain("Too many background runs");
    expect(second.text).not.toMatch(/with external_runs/);
    expect(second.text).toMatch(/completion message/);
    const completions = () => pi.session.messages.filter((m) => (m as { customType?: string }).customType === "pi-flow-run-completed");
    gated.release();
    await expect.poll(() => completions().length).toBe(1);
  });
});

describe("external_runs, refused here", () => {
  test("says what works instead for each action, and the advice works when followed: /flow runs <runId> cancel stops a background run", async () => {
    const first = await pi.callTool("external_delegate", { ...worker, background: true }, { children: [childHangs()] });
    const runId = (first.structuredContent as { data: { run: RunView } }).data.run.runId;
    const advice = async (args: Record<string, unknown>) => {
      const result = await pi.callTool("external_runs", args);
      expect((result.structuredContent as { error: { code: string } }).error.code).toBe("session_unavailable");
      return result.text;
    };
    expect(await advice({ action: "wait", runIds: [runId] })).toMatch(/completion message/);
    expect(await advice({ action: "apply", runIds: [runId] })).toContain(`/flow apply ${runId}`);
    expect(await advice({ action: "cancel", runIds: [runId] })).toContain(`/flow runs ${runId} cancel`);
    expect(await flow(`runs ${runId} cancel`)).toContain(`Cancel requested for ${runId}`);
    const completions = () => pi.session.messages.filter((m) => (m as { customType?: string }).customType === "pi-flow-run-completed") as unknown as { details: RunView }[];
    await expect.poll(() => completions().length).toBe(1);
    expect(completions()[0]!.details.state.outcome).toBe("cancelled");
  });
});

describe("what the tools tell the model", () => {
  test("no sentence of pi-flow's tool descriptions or parameter descriptions says to wait or page with external_runs without saying what works in a session not saved to a file", async () => {
    const flowTools = pi.session.getAllTools().filter((tool) => tool.name.startsWith("external_"));
    expect(flowTools.map((tool) => tool.name).sort()).toEqual(["external_delegate", "external_help", "external_runs", "external_workflow"]);
    const descriptions: string[] = [];
    const collect = (node: unknown): void => {
      if (node === null || typeof node !== "object") return;
      const description = (node as { description?: unknown }).description;
      if (typeof description === "string") descriptions.push(description);
      for (const child of Object.values(node)) collect(child);
    };
    for (const tool of flowTools) {
      descriptions.push(tool.description);
      collect(tool.parameters);
    }
    const sentences = descriptions.flatMap((text) => text.split(/(?<=\.)\s+/));
    const sendsToExternalRuns = sentences.filter((sentence) => /\b(wait|page|cancel)\b[^.]*external_runs|page run\.refs/i.test(sentence));
    expect(sendsToExternalRuns.length).toBeGreaterThan(0);
    expect(sendsToExternalRuns.filter((sentence) => !/not saved to a file/.test(sentence))).toEqual([]);
  });

  test("no core rule of external_help's contract index says to wait with external_runs or page run.refs without saying what holds in a session not saved to a file", async () => {
    const result = await pi.callTool("external_help", { topic: "contracts" });
    const rules = (result.structuredContent as { data: { index: { rules: string[] } } }).data.index.rules;
    const sendsToExternalRuns = rules.filter((rule) => /\b(wait|page)\b[^.]*(external_runs|run\.refs)/i.test(rule));
    expect(sendsToExternalRuns.length).toBeGreaterThan(0);
    expect(sendsToExternalRuns.filter((rule) => !/not saved to a file/.test(rule))).toEqual([]);
  });
});
