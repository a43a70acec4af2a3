import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { fauxAssistantMessage, fauxText, type FauxResponseStep } from "@earendil-works/pi-ai";
import { DefaultResourceLoader } from "@earendil-works/pi-coding-agent";
import { runInChildSessionContext } from "../../src/harnesses/child-context.ts";
import { loadChildResources, SharedResources, type ResourceSetup } from "../../src/harnesses/shared-resources.ts";
import { loads, markerExtension } from "../support/marker-extension.ts";
import { PROJECT_ROOT, startPiSession, type PiTestSession } from "../support/pi-session.ts";
import { childAnswers, childAnswersWhenReleased, seenBy, type Seen } from "../support/children.ts";
import { callForReceipt } from "../support/receipts.ts";

/**
 * The pi children of one workflow call, and those launched in one turn of the parent, share one
 * load of the project's resources (settings, skills, context files, system prompt files) when that
 * load found no extension: a fan-out of a thousand children does not scan the project a thousand
 * times. A load with an extension is never
 * shared, since an extension's handlers and state belong to the session that loaded it.
 */

let pi: PiTestSession | undefined;
let root: string | undefined;
afterEach(async () => {
  await pi?.dispose();
  pi = undefined;
  if (root) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

function project(): string {
  root = mkdtempSync(join(tmpdir(), "pi-flow-shared-"));
  const dir = join(root, "project");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "AGENTS.md"), "House rule: answer in French.\n");
  return dir;
}


/** The project's context file changes its rule while children run. */
const newRule = (cwd: string) => writeFileSync(join(cwd, "AGENTS.md"), "House rule: answer in German.\n");

/** A child answers, recording what it saw, after `then` ran (while its session is live). */
const answerThen = (text: string, seen: Seen[], then: () => void): FauxResponseStep => (context) => {
  then();
  seen.push(seenBy(context.messages));
  return fauxAssistantMessage([fauxText(text)]);
};

const sequential = (n: number, extra = "") =>
  `const out = [];\nfor (let i = 0; i < ${n}; i++) out.push((await agent({ role: "worker", prompt: "item " + i, context: { mode: "none" }${extra} })).value);\nreturn out;`;

describe("a workflow's pi children", () => {
  test("see the project's context files as the first of them loaded them; the next workflow call sees an edit", async () => {
    const cwd = project();
    pi = await startPiSession({ cwd });
    const seen: Seen[] = [];
    // The first child's model edits AGENTS.md while the workflow runs: its siblings keep the load they share.
    const children = [answerThen("un", seen, () => newRule(cwd)), childAnswers("deux", seen), childAnswers("trois", seen)];
    const { receipt } = await callForReceipt(pi, "external_workflow", { script: sequential(3) }, { children });
    expect(receipt.ok).toBe(true);
    expect(receipt.data.run?.output.value).toEqual(["un", "deux", "trois"]);
    expect(seen.map((child) => child.system.includes("answer in French"))).toEqual([true, true, true]);

    const next: Seen[] = [];
    await callForReceipt(pi, "external_workflow", { script: sequential(1) }, { children: [childAnswers("eins", next)] });
    expect(next[0]!.system).toContain("answer in German");
    expect(next[0]!.system).not.toContain("answer in French");
  });

  test("each load their own extension, every child of the workflow; isolated ones load none and still see the context files", async () => {
    const cwd = project();
    const marker = join(root!, "extension-ran.txt");
    mkdirSync(join(cwd, ".pi", "extensions"), { recursive: true });
    writeFileSync(join(cwd, ".pi", "extensions", "mark.ts"), markerExtension(marker));
    pi = await startPiSession({ cwd });
    const before = loads(marker);
    expect(before).toBeGreaterThan(0); // the parent session loaded it
    const { receipt } = await callForReceipt(pi, "external_workflow", { script: sequential(3) }, { children: ["a", "b", "c"].map((text) => childAnswers(text)) });
    expect(receipt.ok).toBe(true);
    expect(loads(marker)).toBe(before + 3);

    const seen: Seen[] = [];
    const isolated = await callForReceipt(pi, "external_workflow", { script: sequential(3, ", isolated: true") }, { children: ["a", "b", "c"].map((text) => childAnswers(text, seen)) });
    expect(isolated.receipt.ok).toBe(true);
    expect(loads(marker)).toBe(before + 3);
    expect(seen.map((child) => child.system.includes("answer in French"))).toEqual([true, true, true]);
  });

  test("select a project's role as the first of them read it; the next workflow call reads an edit, and a role that was unknown is looked for again", async () => {
    const cwd = project();
    const roles = join(cwd, ".pi", "flow", "roles");
    mkdirSync(roles, { recursive: true });
    const reviewer = (rule: string) => writeFileSync(join(roles, "reviewer.md"), `---\ndescription: Reviews.\n---\nReviewer rule: ${rule}.`);
    reviewer("cite line numbers");
    pi = await startPiSession({ cwd });
    const seen: Seen[] = [];
    // The first child's model rewrites the role while the workflow runs: its siblings keep the role as it was read.
    const children = [answerThen("un", seen, () => reviewer("never cite")), childAnswers("deux", seen), childAnswers("trois", seen)];
    const script = `const out = [];\nfor (let i = 0; i < 3; i++) out.push((await agent({ role: "reviewer", prompt: "item " + i, context: { mode: "none" } })).value);\nreturn out;`;
    const { receipt } = await callForReceipt(pi, "external_workflow", { script }, { children });
    expect(receipt.ok).toBe(true);
    expect(seen.map((child) => child.system.includes("Reviewer rule: cite line numbers."))).toEqual([true, true, true]);

    // A role that did not exist fails its delegation and is not remembered: written by a sibling's model, the next delegation of the turn finds it.
    const auditor = () => writeFileSync(join(roles, "auditor.md"), "---\ndescription: Audits.\n---\nAuditor rule: count twice.");
    const delegate = (role: string) => `await tools.external_delegate({ role: "${role}", description: "${role}", prompt: "go", context: { mode: "none" } })`;
    const found: Seen[] = [];
    const outcome = await pi.runCodemode(`const a = ${delegate("auditor")};\nconst b = ${delegate("reviewer")};\nconst c = ${delegate("auditor")};\nreturn [a.error?.code, b.ok, c.ok];`, {
      children: [answerThen("eins", [], auditor), childAnswers("zwei", found)],
    });
    expect(outcome.value).toEqual(["selection_invalid", true, true]);
    expect(found[0]!.system).toContain("Auditor rule: count twice.");

    const again: Seen[] = [];
    await callForReceipt(pi, "external_workflow", { script: sequential(1).replace('"worker"', '"reviewer"') }, { children: [childAnswers("drei", again)] });
    expect(again[0]!.system).toContain("Reviewer rule: never cite.");
  });

  test("with different roles, or in different folders, each get their own: a role's prompt and a folder's context files", async () => {
    const cwd = project();
    mkdirSync(join(cwd, "sub"));
    writeFileSync(join(cwd, "sub", "AGENTS.md"), "Sub rule: be brief.\n");
    pi = await startPiSession({ cwd });
    const seen: Seen[] = [];
    const script = [
      'const a = await agent({ role: "worker", prompt: "one", context: { mode: "none" } });',
      'const b = await agent({ role: "explorer", prompt: "two", context: { mode: "none" } });',
      'const c = await agent({ role: "worker", prompt: "three", context: { mode: "none" }, cwd: "sub" });',
      'const d = await agent({ role: "worker", prompt: "four", context: { mode: "none" } });',
      "return [a.value, b.value, c.value, d.value];",
    ].join("\n");
    const { receipt } = await callForReceipt(pi, "external_workflow", { script }, { children: ["1", "2", "3", "4"].map((text) => childAnswers(text, seen)) });
    expect(receipt.ok).toBe(true);
    const [worker, explorer, sub, again] = seen;
    // Each role's own prompt, never a sibling's.
    expect(explorer!.system).not.toEqual(worker!.system);
    expect(again!.system).toEqual(worker!.system);
    expect(sub!.system).toContain("be brief");
    expect(worker!.system).not.toContain("be brief");
    expect(again!.system).not.toContain("be brief");
  });
});

describe("pi children launched in one turn of the parent", () => {
  test("share the project as the first of them loaded it; the parent's next turn loads it afresh", async () => {
    const cwd = project();
    pi = await startPiSession({ cwd });
    const seen: Seen[] = [];
    const delegate = (i: number) => `(await tools.external_delegate({ role: "worker", description: "d${i}", prompt: "item ${i}", context: { mode: "none" } })).ok`;
    const outcome = await pi.runCodemode(`return [${delegate(0)}, ${delegate(1)}, ${delegate(2)}];`, {
      children: [answerThen("un", seen, () => newRule(cwd)), childAnswers("deux", seen), childAnswers("trois", seen)],
    });
    expect(outcome.value).toEqual([true, true, true]);
    expect(seen.map((child) => child.system.includes("answer in French"))).toEqual([true, true, true]);

    const next: Seen[] = [];
    const { receipt } = await callForReceipt(pi, "external_delegate", { role: "worker", description: "again", prompt: "again", context: { mode: "none" } }, { children: [childAnswers("eins", next)] });
    expect(receipt.ok).toBe(true);
    expect(next[0]!.system).toContain("answer in German");
  });
});

describe("a background workflow", () => {
  test("keeps the loads of the turn that started it while the parent moves on, for agent() and tools.* children alike", async () => {
    const cwd = project();
    pi = await startPiSession({ cwd });
    const seen: Seen[] = [];
    const gated = childAnswersWhenReleased("un");
    const script = [
      "export const apiVersion = 1;",
      'export const meta = { name: "held", description: "d", tools: ["external_delegate"] };',
      'const a = await agent({ role: "worker", prompt: "one", context: { mode: "none" } });',
      'const b = await agent({ role: "worker", prompt: "two", context: { mode: "none" } });',
      'const c = await tools.external_delegate({ role: "worker", description: "three", prompt: "three", context: { mode: "none" } });',
      "return [a.value, b.value, c.data.run.output.value];",
    ].join("\n");
    const children = [gated.step, childAnswers("deux", seen), childAnswers("trois", seen)];
    const { receipt, run } = await callForReceipt(pi, "external_workflow", { script, background: true }, { children });
    expect(receipt.ok).toBe(true);
    await gated.started;
    // While the first child runs, the project changes and the parent takes a turn of its own.
    newRule(cwd);
    await pi.say("Anything new?", "Nothing.");
    gated.release();
    const waited = await pi.callTool("external_runs", { action: "wait", runIds: [run!.runId] });
    expect((waited.structuredContent as { data: { completed: { output: { value: unknown } }[] } }).data.completed[0]!.output.value).toEqual(["un", "deux", "trois"]);
    expect(seen.map((child) => child.system.includes("answer in French"))).toEqual([true, true]);

    const next: Seen[] = [];
    await callForReceipt(pi, "external_delegate", { role: "worker", description: "later", prompt: "later", context: { mode: "none" } }, { children: [childAnswers("vier", next)] });
    expect(next[0]!.system).toContain("answer in German");
  });
});

describe("SharedResources", () => {
  const setupIn = (cwd: string, change: Partial<ResourceSetup> = {}): ResourceSetup => ({
    cwd,
    agentDir: join(cwd, ".agent"),
    projectTrusted: true,
    isolated: false,
    appendSystemPrompt: ["You work."],
    ...change,
  });

  /** The real load, counted: every setup it was asked for, in order. */
  const countingLoads = () => {
    const made: ResourceSetup[] = [];
    return { made, counted: (setup: ResourceSetup) => (made.push(setup), loadChildResources(setup)) };
  };

  test("loads once for siblings that ask together, and once per setup: folder, trust, isolation, appended prompt", async () => {
    const cwd = project();
    const { made, counted } = countingLoads();
    const shared = new SharedResources();
    const same = await Promise.all(Array.from({ length: 8 }, () => shared.forChild(setupIn(cwd), counted)));
    expect(made).toHaveLength(1);
    expect(new Set(same.map((child) => child.resourceLoader)).size).toBe(8); // a loader of its own each
    expect(same.map((child) => child.resourceLoader.getAgentsFiles().agentsFiles.map((file) => file.content))).toEqual(Array(8).fill(["House rule: answer in French.\n"]));
    // A list one child changes is its own.
    same[1]!.resourceLoader.getAgentsFiles().agentsFiles.length = 0;
    expect(same[2]!.resourceLoader.getAgentsFiles().agentsFiles).toHaveLength(1);

    for (const change of [{ cwd: root! }, { projectTrusted: false }, { isolated: true }, { appendSystemPrompt: ["You review."] }]) {
      await shared.forChild(setupIn(cwd, change), counted);
    }
    expect(made).toHaveLength(5);
    await shared.forChild(setupIn(cwd, { isolated: true }), counted);
    expect(made).toHaveLength(5);
    await new SharedResources().forChild(setupIn(cwd), counted);
    expect(made).toHaveLength(6); // another call loads again
  });

  test("a load that failed is not kept: every sibling that waited for it loads for itself, and so does the next", async () => {
    const cwd = project();
    let calls = 0;
    const failingFirst = (setup: ResourceSetup) => (++calls === 1 ? Promise.reject(new Error("settings unreadable")) : loadChildResources(setup));
    const shared = new SharedResources();
    const results = await Promise.allSettled(Array.from({ length: 3 }, () => shared.forChild(setupIn(cwd), failingFirst)));
    expect(results.map((result) => result.status)).toEqual(["rejected", "fulfilled", "fulfilled"]);
    expect(calls).toBe(3);
    await shared.forChild(setupIn(cwd), failingFirst);
    expect(calls).toBe(4);
    await shared.forChild(setupIn(cwd), failingFirst);
    expect(calls).toBe(4); // that last load was shareable, and is shared
  });

  test("pi-flow installed as a package is no extension of a child's: its load is shared, and no child holds it", async () => {
    const cwd = project();
    const agentDir = join(cwd, ".agent");
    mkdirSync(agentDir, { recursive: true });
    writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ packages: [PROJECT_ROOT] })); // as `pi install` records it
    const { made, counted } = countingLoads();
    const shared = new SharedResources();
    // Inside the child-context guard, as the pi harness builds every child: pi-flow installs nothing there.
    const children = await runInChildSessionContext(() => Promise.all(Array.from({ length: 4 }, () => shared.forChild(setupIn(cwd), counted))));
    expect(made).toHaveLength(1);
    expect(children.map((child) => child.resourceLoader.getExtensions().extensions)).toEqual([[], [], [], []]);
    // The first child too gets a view, never the load itself: no session binds what its siblings read.
    expect(children.some((child) => child.resourceLoader instanceof DefaultResourceLoader)).toBe(false);
  });

  test("a load where an extension failed to load is not shared: each sibling tries again", async () => {
    const cwd = project();
    mkdirSync(join(cwd, ".pi", "extensions"), { recursive: true });
    writeFileSync(join(cwd, ".pi", "extensions", "broken.ts"), 'throw new Error("not today");\n');
    const { made, counted } = countingLoads();
    const shared = new SharedResources();
    const children = [];
    for (let i = 0; i < 3; i++) children.push(await shared.forChild(setupIn(cwd), counted));
    expect(made).toHaveLength(3);
    expect(children.map((child) => child.resourceLoader.getExtensions().errors.length)).toEqual([1, 1, 1]);
  });

  test("a load that found an extension is never shared", async () => {
    const cwd = project();
    const marker = join(root!, "extension-ran.txt");
    mkdirSync(join(cwd, ".pi", "extensions"), { recursive: true });
    writeFileSync(join(cwd, ".pi", "extensions", "mark.ts"), markerExtension(marker));
    const shared = new SharedResources();
    const children = [];
    for (let i = 0; i < 3; i++) children.push(await shared.forChild(setupIn(cwd)));
    expect(loads(marker)).toBe(3);
    expect(children.map((child) => child.resourceLoader.getExtensions().extensions.length)).toEqual([1, 1, 1]);
  });
});
