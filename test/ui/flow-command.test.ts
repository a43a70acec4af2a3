import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { VERSION } from "@earendil-works/pi-coding-agent";
import type { TUI } from "@earendil-works/pi-tui";
import { afterEach, describe, expect, test } from "vitest";
import type { RunView } from "../../src/contract/run-schema.ts";
import { childAnswers, childAnswersWhenReleased, childHangs } from "../support/children.ts";
import { startPiSession, type PiTestSession } from "../support/pi-session.ts";
import { recordingUi, type RecordingUi } from "../support/recording-ui.ts";
import { seen, theme } from "./views.ts";

let pi: PiTestSession | undefined;
afterEach(() => pi?.dispose());

const PRICE = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };

/** What the last `/flow` printed: the session entry the transcript draws. */
function lastOutput(session: PiTestSession): { title: string; lines: string[] } {
  const entries = session.session.sessionManager.getEntries().filter((entry) => entry.type === "custom" && entry.customType === "pi-flow-output");
  const last = entries.at(-1) as { data: { title: string; lines: string[] } } | undefined;
  if (!last) throw new Error("/flow printed nothing");
  return last.data;
}

async function flow(session: PiTestSession, args: string): Promise<string> {
  await session.session.prompt(`/flow ${args}`);
  return lastOutput(session).lines.join("\n");
}

const completions = (session: PiTestSession) => session.session.messages.filter((m) => (m as { customType?: string }).customType === "pi-flow-run-completed");

describe("/flow without a model call", () => {
  test("doctor: versions, the model's credentials, broken role and agent files, the run store, CLI harnesses", async () => {
    pi = await startPiSession({ env: { PATH: "" } });
    const roles = join(pi.cwd, ".pi", "flow", "roles");
    mkdirSync(roles, { recursive: true });
    writeFileSync(join(roles, "broken.md"), "---\ntools: 7\n---\nDo things.\n");
    const text = await flow(pi, "doctor");
    expect(text).toContain(`node     ${process.version}`);
    expect(text).toContain(`pi       ${VERSION}`);
    expect(text).toContain("model    faux/faux-1: credentials found (runtime)");
    expect(text).toMatch(/profiles 1 file fails to parse:\n {2}role .*broken\.md: broken\.md: tools must be a list of tool names\./);
    expect(text).toContain(`runs     ${pi.flowHome}: `);
    expect(text).toMatch(/claude {3}unavailable: .*not found on PATH/);
    expect(text).toMatch(/codex {4}unavailable: /);
    expect(text).toContain("backend  local (children run in this process)");
    expect(text).toMatch(/^traces {3}off \(OTEL_TRACES_EXPORTER=otlp and OTEL_EXPORTER_OTLP_ENDPOINT turn it on/m);
    // Someone with no model is told how to try workflows anyway.
    expect(text).toMatch(/^no model\? flow run <workflow> --stub .* --replay <cassette>/m);
    // No model request was made.
    expect(pi.session.messages.filter((m) => m.role === "assistant")).toHaveLength(0);
  });

  test("doctor names where traces go without the endpoint's credentials", async () => {
    const token = "glc_eyJvIjoiMTIzNDU2IiwibiI6InN0YWNrLXRva2VuIiwiayI6IkFCQ0RFRkdISUpLTE1OT1AifQ";
    pi = await startPiSession({ env: { OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_ENDPOINT: `https://tenant:${token}@otlp.example.com/otlp?api_key=k3y-v4lue-0123456789` } });
    const text = await flow(pi, "doctor");
    expect(text).toMatch(/^traces {3}OTLP http\/protobuf to https:\/\/tenant:\*\*\*@otlp\.example\.com\/otlp\?api_key=\*\*\*/m);
    expect(text).not.toContain(token);
    expect(text).not.toContain("k3y-v4lue");
  });

  test("workflows: each saved workflow with its source, description and arguments; one that does not parse says why", async () => {
    pi = await startPiSession();
    const dir = join(pi.cwd, ".pi", "flow", "workflows");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "triage.js"), 'export const apiVersion = 1;\nexport const meta = { name: "triage", description: "Sort the issues.", args: { type: "object" } };\nreturn 1;\n');
    writeFileSync(join(dir, "oops.js"), "export const apiVersion = 1;\nreturn (;\n");
    const text = await flow(pi, "workflows");
    expect(text).toContain("review (shipped): ");
    // Arguments as a person reads them: name, type, required or not, description.
    expect(text).toMatch(/review \(shipped\): .*\n {2}args:\n {4}target \(string, required\): \S/);
    expect(text).not.toContain('"type":"object"');
    expect(text).toContain("triage (project): Sort the issues.\n  args: any object");
    expect(text).toMatch(/oops: does not parse: .*script_invalid|oops: does not parse: .*line 2/);
  });

  test("roles and help", async () => {
    pi = await startPiSession();
    const roles = await flow(pi, "roles");
    expect(roles).toMatch(/explorer \(builtin\): /);
    expect(roles).toMatch(/worker \(builtin\): /);
    const usage = await flow(pi, "");
    expect(usage).toContain("/flow runs <runId> [inspect|tail|cancel]");
    const limits = await flow(pi, "help limits");
    expect(limits.length).toBeGreaterThan(100);
    expect(await flow(pi, "help nonsense")).toMatch(/^selection_invalid: Unknown topic "nonsense"/);
    expect(await flow(pi, "bogus")).toContain('Unknown subcommand "bogus"');
  });

  test("runs: the list with status and cost, one run inspected, its output's tail, and a cancel", async () => {
    pi = await startPiSession({ modelCost: PRICE });
    const done = await pi.callTool("external_delegate", { role: "explorer", description: "Count files", prompt: "Count." }, { children: [childAnswers("First line.\nTwelve files.")] });
    const finished = (done.structuredContent as { data: { run: RunView } }).data.run;
    const list = await flow(pi, "runs");
    expect(list).toMatch(new RegExp(`✓ ${finished.runId} explorer: Count files · succeeded · [\\d.]+m?s · [\\d.]+k? tok \\$`));
    expect(list).toMatch(/Total cost of these runs: \$/);
    const inspected = await flow(pi, `runs ${finished.runId}`);
    expect(inspected).toContain("answer:\nFirst line.\nTwelve files.");
    expect(inspected).toMatch(/usage: 1 turn · .* · \$/);
    expect(await flow(pi, `runs ${finished.runId} tail`)).toContain("Twelve files.");
    // A long output shows its end, however far past the first pages it lies.
    const long = Array.from({ length: 40_000 }, (_, i) => `line ${i} of a long report`).join("\n");
    const big = await pi.callTool("external_delegate", { role: "explorer", description: "Long report", prompt: "Report." }, { children: [childAnswers(long)] });
    const bigTail = (await flow(pi, `runs ${(big.structuredContent as { data: { run: RunView } }).data.run.runId} tail`)).split("\n");
    expect(bigTail).toHaveLength(20);
    expect(bigTail.at(-1)).toBe("line 39999 of a long report");
    expect(bigTail[0]).toBe("line 39980 of a long report");
    expect(await flow(pi, "runs ag_0000000000_0000000000 inspect")).toMatch(/^(run_unavailable|request_invalid): /);

    let hanging!: () => void;
    const started = new Promise<void>((resolve) => (hanging = resolve));
    const accepted = await pi.callTool("external_delegate", { role: "explorer", description: "Slow one", prompt: "Wait.", background: true }, { children: [childHangs(hanging)] });
    const runId = (accepted.structuredContent as { data: { run: RunView } }).data.run.runId;
    await started;
    expect(await flow(pi, `runs ${runId} cancel`)).toContain(`Cancel requested for ${runId}`);
    await expect.poll(() => completions(pi!).length).toBe(1);
    expect(await flow(pi, `runs ${runId}`)).toMatch(/outcome: cancelled/);
  });
});

test("runs: an answer that writes escape sequences is kept in the session without them, by inspect and by tail", async () => {
  pi = await startPiSession();
  const answer = "First \u001b]52;c;Y3VybCBldmlsIHwgc2g=\u0007line.\u001b]0;pwned\u0007\u001b[2J\nTwelve\u202e files.";
  const done = await pi.callTool("external_delegate", { role: "explorer", description: "Count files", prompt: "Count." }, { children: [childAnswers(answer)] });
  const runId = (done.structuredContent as { data: { run: RunView } }).data.run.runId;
  for (const action of ["inspect", "tail"]) {
    const text = await flow(pi, `runs ${runId} ${action}`);
    expect(text).toContain("First line.\nTwelve files.");
    expect(text).not.toMatch(/[\u001b\u0007\u009b\u202e]|pwned|Y3VybC/);
  }
});

test("runs: a workflow's tail shows the lines its script logged, not the log's JSON", async () => {
  pi = await startPiSession();
  const done = await pi.callTool("external_workflow", { script: 'console.log("hello one"); console.log("two\\nthree"); return 1;', description: "logs" });
  const runId = (done.structuredContent as { data: { run: RunView } }).data.run.runId;
  expect((await flow(pi, `runs ${runId} tail`)).split("\n")).toEqual(["hello one", "two", "three"]);
});

test("report to a quoted path with spaces writes that file; extra or half-quoted words are refused, not dropped", async () => {
  pi = await startPiSession();
  const done = await pi.callTool("external_delegate", { role: "explorer", description: "Count files", prompt: "Count." }, { children: [childAnswers("Twelve.")] });
  const runId = (done.structuredContent as { data: { run: RunView } }).data.run.runId;
  const target = join(pi.cwd, "my reports", "run one.html");
  expect(await flow(pi, `report ${runId} "my reports/run one.html"`)).toContain(`written to ${target}`);
  expect(readFileSync(target, "utf8")).toContain("<html");
  expect(await flow(pi, `report ${runId} 'my reports/run two.html'`)).toContain(`written to ${join(pi.cwd, "my reports", "run two.html")}`);
  expect(await flow(pi, `report ${runId} my report.html`)).toMatch(/^request_invalid: Unexpected "report\.html"\. Usage: \/flow report <runId> \[FILE\]/);
  expect(await flow(pi, `report ${runId} "my report.html`)).toMatch(/^request_invalid: The " quote opened at .* is not closed\./);
  expect(await flow(pi, `runs ${runId} inspect now`)).toMatch(/^request_invalid: Unexpected "now"/);
  expect(await flow(pi, "doctor please")).toMatch(/^request_invalid: Unexpected "please"\. Usage: \/flow doctor$/);
  expect(readdirSync(pi.cwd).sort()).toEqual([".agent", ".flow-home", "my reports"].sort());
});

describe("in the interactive TUI", () => {
  let ui: RecordingUi;
  const start = async () => {
    ui = recordingUi(theme);
    pi = await startPiSession({ ui: ui.context, mode: "tui", modelCost: PRICE });
    return pi;
  };
  const screen = { requestRender() {} } as unknown as TUI;
  const widgetText = (width: number) => {
    const factory = ui.widgets.get("pi-flow-runs");
    if (typeof factory !== "function") throw new Error("no widget shown");
    const component = factory(screen, theme);
    try {
      return seen(component, width);
    } finally {
      component.dispose?.();
    }
  };

  test("a background workflow shows in a widget and the status line while it runs, and both go when it ends", async () => {
    const session = await start();
    expect(ui.widgets.size).toBe(0);
    const gated = childAnswersWhenReleased("second answer");
    const script = 'const a = await agent({ role: "explorer", description: "first", prompt: "One." });\nconst b = await agent({ role: "explorer", description: "second", prompt: "Two." });\nreturn [a.output, b.output];';
    const accepted = await session.callTool("external_workflow", { script, description: "Two looks", background: true }, { children: [childAnswers("first answer"), gated.step] });
    const runId = (accepted.structuredContent as { data: { run: RunView } }).data.run.runId;
    await gated.started;
    expect(ui.statuses.get("pi-flow")).toBe("flow: 1 background run");
    for (const width of [40, 80, 120]) expect(widgetText(width).length).toBeGreaterThan(0);
    expect(widgetText(120)).toMatch(/… Workflow inline Two looks 1\/2 children · [\d.]+m?s · \$/);
    gated.release();
    await expect.poll(() => completions(session).length).toBe(1);
    expect(ui.widgets.has("pi-flow-runs")).toBe(false);
    expect(ui.statuses.has("pi-flow")).toBe(false);
    expect(ui.history.slice(0, 2)).toEqual(["status pi-flow flow: 1 background run", "widget pi-flow-runs on"]);
    expect(ui.history.slice(-2)).toEqual(["widget pi-flow-runs off", "status pi-flow off"]);
    expect(runId.length).toBeGreaterThan(0);
  });

  test("/flow runs: pick a run, then cancel it after confirming", async () => {
    const session = await start();
    let hanging!: () => void;
    const started = new Promise<void>((resolve) => (hanging = resolve));
    const accepted = await session.callTool("external_delegate", { role: "explorer", description: "Slow one", prompt: "Wait.", background: true }, { children: [childHangs(hanging)] });
    const runId = (accepted.structuredContent as { data: { run: RunView } }).data.run.runId;
    await started;
    ui.answers.push(undefined);
    await session.session.prompt("/flow runs");
    const offered = ui.offered.at(-1)!;
    expect(offered.title).toBe("pi-flow runs");
    const line = offered.options.find((option) => option.includes(runId));
    expect(line).toMatch(/… .* explorer: Slow one · running/);
    ui.answers.push((options) => options.find((option) => option.includes(runId)), "cancel", true);
    await session.session.prompt("/flow runs");
    expect(ui.offered.at(-1)).toEqual({ title: `Run ${runId}`, options: ["inspect", "tail", "cancel"] });
    expect(lastOutput(session).lines[0]).toContain(`Cancel requested for ${runId}`);
    await expect.poll(() => completions(session).length).toBe(1);
    expect((completions(session)[0] as unknown as { details: RunView }).details.state.outcome).toBe("cancelled");
    // A mistyped run ID, or a run that already ended, is said at once: no confirmation is asked for it.
    ui.answers.push(true);
    await session.session.prompt("/flow runs ag_bogus cancel");
    expect(lastOutput(session).lines[0]).toMatch(/^request_invalid: Malformed run ID "ag_bogus"/);
    await session.session.prompt(`/flow runs ${runId} cancel`);
    expect(lastOutput(session).lines).toEqual([`${runId} had already finished.`]);
    expect(ui.answers).toEqual([true]);
  });
});

test("in RPC mode nothing is drawn: no widget or status calls reach the client during a background run", async () => {
  const ui = recordingUi(theme);
  pi = await startPiSession({ ui: ui.context, mode: "rpc" });
  const accepted = await pi.callTool("external_delegate", { role: "explorer", description: "Quiet", prompt: "Go.", background: true }, { children: [childAnswers("done")] });
  expect((accepted.structuredContent as { ok: boolean }).ok).toBe(true);
  await expect.poll(() => completions(pi!).length).toBe(1);
  expect(ui.history).toEqual([]);
});
