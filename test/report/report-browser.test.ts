import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fauxAssistantMessage, fauxText, type FauxResponseStep } from "@earendil-works/pi-ai";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect, test } from "vitest";
import type { RunView } from "../../src/contract/run-schema.ts";
import { childAnswersWhenReleased, seenBy } from "../support/children.ts";
import { launchChromium, openFile, screenshotPath } from "../support/browser.ts";
import { startPiSession, type PiTestSession } from "../support/pi-session.ts";
import { flowInProcess } from "../cli/in-process.ts";
import { EXIT } from "../../src/command-line/exit.ts";

const PRICE = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };
const SECRET = "sk-ant-api03-" + "Zq7Xw2Lp9Rt4Vb8Nc1Md6Kf3Hj5Gs0Ay".repeat(2);
const LONG = `Findings, in detail. ${"The parser accepts a trailing comma where the grammar forbids it. ".repeat(40)}The key is ${SECRET} in .env.`;

/** Each child's model answers by the task it was given; "gamma" fails as a provider error does. */
const byTask: FauxResponseStep = (context) => {
  const user = seenBy(context.messages).user;
  if (user.includes("gamma")) return fauxAssistantMessage([], { stopReason: "error", errorMessage: "the request was refused: bad schema" });
  if (user.includes("beta")) return fauxAssistantMessage([fauxText(LONG)]);
  return fauxAssistantMessage([fauxText("Alpha looks fine: 12 files, all typed.")]);
};

const SCRIPT = `export const meta = { tools: ["external_delegate"] };
const looks = await parallel(["alpha", "beta", "gamma"].map((name) => () =>
  agent({ role: "explorer", description: "Review " + name + " <module>", prompt: "Review the " + name + " module.", context: { mode: "none" } })
    .catch((error) => ({ failed: error.message }))));
console.log("reviewed " + looks.length + " modules");
const listed = await tools.external_runs({ action: "list" });
await tools.external_help({ topic: "roles" });
const refused = await tools.external_runs({ action: "wait" });
const delegated = await tools.external_delegate({ description: "A delegated check", prompt: "Check the delegated module.", role: "explorer", context: { mode: "none" } });
return { reviewed: looks.length, listed: listed.ok, refused: refused.ok, delegated: delegated.ok };`;

let pi: PiTestSession;
let browser: Browser;
let workflow: RunView;

beforeAll(async () => {
  [pi, browser] = await Promise.all([startPiSession({ modelCost: PRICE }), launchChromium()]);
  const outcome = await pi.callTool("external_workflow", { script: SCRIPT, description: "Review three modules" }, { children: [byTask, byTask, byTask, byTask] });
  workflow = (outcome.structuredContent as { data: { run: RunView } }).data.run;
});
afterAll(async () => {
  await browser?.close();
  await pi?.dispose();
});

test("/flow report writes one HTML file that Chromium renders offline: every child's description, outcome and cost, errors in place, the secret redacted", async () => {
  const file = join(pi.cwd, "report.html");
  await pi.session.prompt(`/flow report ${workflow.runId} ${file}`);
  expect(statSync(file).mode & 0o077).toBe(0);
  const html = readFileSync(file, "utf8");
  expect(html).not.toContain(SECRET);
  expect(html).not.toContain("<module>"); // a description is text, never markup

  const { page, requests, consoleErrors } = await openFile(browser, file);
  await page.screenshot({ path: screenshotPath("report.png"), fullPage: true });
  expect(requests).toEqual([`file://${file}`]);
  expect(consoleErrors).toEqual([]);

  // The workflow, its three agent() children and the run its tools.external_delegate call started.
  const rows = page.locator("table.tree tr.run");
  expect(await rows.count()).toBe(5);
  const text = (await page.locator("table.tree").innerText()).replace(/\s+/g, " ");
  for (const name of ["alpha", "beta", "gamma"]) expect(text).toContain(`Review ${name} <module>`);
  expect(await page.locator("tr.run.succeeded").count()).toBe(4); // the workflow, two children and the delegation
  const delegatedRow = page.locator("tr.run", { hasText: "A delegated check" });
  expect((await delegatedRow.innerText()).replace(/\s+/g, " ").trim()).toMatch(/A delegated check explorer .*succeeded .*\d+ in \/ \d+ out \$\d+\.\d{4}$/);
  const delegatedCost = Number(/\$(\d+\.\d{4})/.exec(await delegatedRow.locator("td.cost").innerText())?.[1]);
  expect(delegatedCost).toBeGreaterThan(0);
  const failed = page.locator("tr.run.failed");
  expect(await failed.count()).toBe(1);
  expect(await failed.innerText()).toMatch(/Review gamma <module>[\s\S]*the request was refused: bad schema[\s\S]*failed/);
  // Each child's cost is shown, and the totals add them up.
  const costs = await page.locator("tr.run td.cost").allInnerTexts();
  const dollars = costs.map((cost) => Number(/^\$(\d+\.\d{4})$/.exec(cost)?.[1]));
  expect(dollars.slice(1).filter((cost) => cost > 0)).toHaveLength(4);
  const total = Number(/\$(\d+\.\d{4})/.exec(await page.locator("table.totals td.cost").innerText())?.[1]);
  expect(total).toBeCloseTo(dollars.slice(1).reduce((sum, cost) => sum + cost, 0), 3);
  // The workflow's own usage is its agent() children's; the report's totals add the delegation.
  expect(total).toBeCloseTo(workflow.usage!.costUsd! + delegatedCost, 3);
  const delegatedSection = page.locator("article.detail", { has: page.locator("h3", { hasText: "A delegated check" }) });
  expect(await delegatedSection.innerText()).toContain(`started by ${workflow.runId}`);

  // The long answer is folded, unfolds on a click, and its secret stays redacted in the page.
  const beta = page.locator("article.detail", { has: page.locator("h3", { hasText: "Review beta" }) });
  expect(await beta.locator("details.fold").getAttribute("open")).toBeNull();
  await page.getByRole("button", { name: "Unfold every answer" }).click();
  expect(await beta.locator("details.fold").getAttribute("open")).toBe("");
  expect(await beta.innerText()).toContain("in .env");
  expect(await page.locator("body").innerText()).not.toContain(SECRET);
  // The workflow's calls, from its journal: its agent() calls linked to each child's section, and
  // the tools.* calls that started no run, each with its action and outcome; and its log.
  const root = page.locator(`article#run-${workflow.runId}`);
  // Every call that started a run links to that run's section: the three agent() children and the delegation.
  expect(await root.locator("table.calls a").count()).toBe(4);
  const calls = (await root.locator("table.calls tr.call").allInnerTexts()).map((row) => row.replace(/\s+/g, " ").trim());
  expect(calls).toHaveLength(7);
  expect(calls.filter((row) => row.includes("agent(explorer)"))).toHaveLength(3);
  expect(calls.slice(3)).toEqual([
    expect.stringMatching(/^0 tools\.external_runs list – succeeded$/),
    expect.stringMatching(/^1 tools\.external_help \S+ – succeeded$/),
    expect.stringMatching(/^2 tools\.external_runs wait request_invalid: .+ – failed$/),
    expect.stringMatching(/^3 tools\.external_delegate delegate A delegated check ag_\w+ succeeded$/),
  ]);
  expect(await root.innerText()).toContain("reviewed 3 modules");
  expect(consoleErrors).toEqual([]);
});

test("/flow report with no FILE writes the report to the Flow home's reports folder and says where", async () => {
  await pi.session.prompt(`/flow report ${workflow.runId}`);
  const outputs = pi.session.sessionManager.getEntries().filter((entry) => entry.type === "custom" && entry.customType === "pi-flow-output");
  const said = (outputs.at(-1) as { data: { lines: string[] } } | undefined)?.data.lines ?? [];
  const file = join(pi.flowHome, "reports", `${workflow.runId}.html`);
  expect(said[0]).toBe(`Report of ${workflow.runId} written to ${file}`);
  expect(statSync(file).mode & 0o077).toBe(0);
  const html = readFileSync(file, "utf8");
  expect(html).toMatch(/^<!doctype html>/i);
  expect(html).toContain("A delegated check");
  expect(html).not.toContain(SECRET);
});

test("/flow report with a relative FILE writes it in the session's folder, not the process's", async () => {
  expect(pi.cwd).not.toBe(process.cwd());
  const name = `report-${workflow.runId}.html`;
  try {
    await pi.session.prompt(`/flow report ${workflow.runId} ${name}`);
    expect(readFileSync(join(pi.cwd, name), "utf8")).toContain("A delegated check");
  } finally {
    rmSync(join(process.cwd(), name), { force: true }); // where an older build put it
  }
});

test("/flow report with a FILE under ~ writes it in the home folder, as Pi's /export does, not in a folder named ~ in the session's", async () => {
  // A folder named ~ in the project is one `rm -rf ~` away from the user's home.
  const home = join(pi.cwd, "home-of-the-user");
  mkdirSync(home);
  const outerHome = process.env.HOME;
  process.env.HOME = home;
  try {
    await pi.session.prompt(`/flow report ${workflow.runId} ~/reports/${workflow.runId}.html`);
  } finally {
    process.env.HOME = outerHome;
  }
  expect(readFileSync(join(home, "reports", `${workflow.runId}.html`), "utf8")).toContain("A delegated check");
  expect(existsSync(join(pi.cwd, "~"))).toBe(false);
});

test("external_runs serves a workflow's calls view: every agent() and tools.* call as its journal has it, paged like every view", async () => {
  let text = "";
  let cursor: string | undefined;
  do {
    const outcome = await pi.callTool("external_runs", { action: "inspect", runIds: [workflow.runId], view: "calls", limitBytes: 300, ...(cursor ? { cursor } : {}) });
    const { page } = (outcome.structuredContent as { data: { page: { text: string; encoding: string; nextCursor?: string } } }).data;
    expect(page.encoding).toBe("json");
    expect(Buffer.byteLength(page.text)).toBeLessThanOrEqual(300);
    text += page.text;
    cursor = page.nextCursor;
  } while (cursor);
  const calls = JSON.parse(text) as { kind: string; index: number; target: string; action?: string; status: string; runId?: string; error?: { code: string } }[];
  const agents = calls.filter((call) => call.kind === "agent");
  expect(agents.map((call) => call.status).sort()).toEqual(["failed", "succeeded", "succeeded"]);
  expect(agents.every((call) => call.target === "explorer" && call.runId?.startsWith("ag_"))).toBe(true);
  expect(calls.filter((call) => call.kind === "tool")).toEqual([
    { kind: "tool", index: 0, target: "external_runs", action: "list", status: "succeeded" },
    { kind: "tool", index: 1, target: "external_help", action: expect.any(String), status: "succeeded" },
    { kind: "tool", index: 2, target: "external_runs", action: "wait", status: "failed", error: { code: "request_invalid", message: expect.any(String) } },
    { kind: "tool", index: 3, target: "external_delegate", action: expect.any(String), runId: expect.stringMatching(/^ag_/), status: "succeeded" },
  ]);
  // An agent run makes no calls: its calls view is an empty page.
  const child = await pi.callTool("external_runs", { action: "inspect", runIds: [agents[0]!.runId!], view: "calls" });
  expect((child.structuredContent as { data: { page: { text: string } } }).data.page.text).toBe("");
});

test("flow runs report --out reports a run still in progress with what is known so far", async () => {
  const held = childAnswersWhenReleased("Done at last.");
  const accepted = await pi.callTool("external_workflow", { script: 'return (await agent({ role: "explorer", description: "Slow review", prompt: "Wait.", context: { mode: "none" } })).output;', description: "Still going", background: true }, { children: [held.step] });
  const runId = (accepted.structuredContent as { data: { run: RunView } }).data.run.runId;
  await held.started;
  const out = join(pi.cwd, "live.html");
  // flow's main in this process (the session set PI_FLOW_HOME and Pi's agent directory): no second Pi to start.
  const reported = await flowInProcess(["runs", "report", runId, "--out", out, "--cwd", pi.cwd], { env: { ...process.env } });
  held.release();
  expect(reported).toMatchObject({ code: EXIT.succeeded, stdout: "", stderr: `report of ${runId} written to ${out}\n` });
  const { page, requests, consoleErrors } = await openFile(browser, out);
  expect(requests).toEqual([`file://${out}`]);
  expect(consoleErrors).toEqual([]);
  expect(await page.locator("header").innerText()).toMatch(/This run is running: the report shows what is known at/);
  expect(await page.locator("tr.run", { hasText: "Slow review" }).innerText()).toMatch(/running/);
});

test("a workflow of 200 children stays readable: one row a child, each with its bar inside the timeline", async () => {
  const script = `export const meta = { limits: { agentCalls: 200, concurrency: 32 } };
const runs = await parallel(Array.from({ length: 200 }, (_, index) => () =>
  agent({ role: "explorer", harness: "stub", description: "Check part " + index, prompt: "Check it.", context: { mode: "none" } })));
return runs.length;`;
  const outcome = await pi.callTool("external_workflow", { script, description: "Two hundred checks" });
  const run = (outcome.structuredContent as { data: { run: RunView } }).data.run;
  expect(run.state.outcome).toBe("succeeded");
  const runId = run.runId;
  // Without --out the page goes to stdout, as a shell would redirect it to a file.
  const reported = await flowInProcess(["runs", "report", runId, "--cwd", pi.cwd], { env: { ...process.env } });
  expect(reported).toMatchObject({ code: EXIT.succeeded, stderr: "" });
  const file = join(pi.cwd, "wide.html");
  writeFileSync(file, reported.stdout);
  const { page, requests, consoleErrors } = await openFile(browser, file);
  await page.screenshot({ path: screenshotPath("report-200.png") });
  expect(requests).toEqual([`file://${file}`]);
  expect(consoleErrors).toEqual([]);
  const rows = await page.locator("table.tree tr.run").evaluateAll((elements) =>
    elements.map((row) => {
      const bar = row.querySelector("td.bar")!.getBoundingClientRect();
      const span = row.querySelector(".span")!.getBoundingClientRect();
      return { height: row.getBoundingClientRect().height, inside: span.left >= bar.left - 1 && span.right <= bar.right + 1 && span.width >= 1 };
    }),
  );
  expect(rows).toHaveLength(201);
  // One line of text a row: the whole tree is a few thousand pixels, not 200 screens.
  expect(Math.max(...rows.map((row) => row.height))).toBeLessThan(30);
  expect(rows.every((row) => row.inside)).toBe(true);
  for (const index of [0, 99, 199]) expect(await page.locator("table.tree").innerText()).toContain(`Check part ${index}`);
});
