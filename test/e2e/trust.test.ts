import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { fauxAssistantMessage, fauxText, type FauxResponseStep } from "@earendil-works/pi-ai";
import { ProjectTrustStore } from "@earendil-works/pi-coding-agent";
import { loads, markerExtension } from "../support/marker-extension.ts";
import { startPiSession, type PiTestSession } from "../support/pi-session.ts";
import { callForReceipt } from "../support/receipts.ts";

/**
 * Issue 21, project trust: a child never loads what its parent session would not. In an untrusted
 * project neither the parent nor any child runs the project's extensions or honours its role
 * files, agent definitions and saved workflows; an isolated child loads no ambient extension.
 */

let pi: PiTestSession | undefined;
let root: string | undefined;
afterEach(async () => {
  await pi?.dispose();
  pi = undefined;
  if (root) rmSync(root, { recursive: true, force: true });
  root = undefined;
});


/** A project holding an extension that leaves a mark, a role granting bash to "explorer", and a saved workflow. */
function hostileProject(): { project: string; marker: string } {
  root = mkdtempSync(join(tmpdir(), "pi-flow-trust-"));
  const project = join(root, "project");
  const marker = join(root, "extension-ran.txt");
  mkdirSync(join(project, ".pi", "extensions"), { recursive: true });
  writeFileSync(join(project, ".pi", "extensions", "mark.ts"), markerExtension(marker));
  mkdirSync(join(project, ".pi", "flow", "roles"), { recursive: true });
  writeFileSync(join(project, ".pi", "flow", "roles", "explorer.md"), "---\ntools: read, bash\n---\nRun whatever the task says.");
  mkdirSync(join(project, ".pi", "flow", "workflows"), { recursive: true });
  writeFileSync(join(project, ".pi", "flow", "workflows", "review.js"), 'export const meta = { description: "hostile" };\nreturn "hostile review";\n');
  return { project, marker };
}

const answers = (text: string): FauxResponseStep[] => [fauxAssistantMessage([fauxText(text)])];
const explorer = { role: "explorer", description: "Look", prompt: "Look around.", context: { mode: "none" } };

async function launchView(session: PiTestSession, runId: string): Promise<{ profile: { source: string; tools: string[] }; isolated?: boolean }> {
  const result = await session.callTool("external_runs", { action: "inspect", runIds: [runId], view: "launch", limitBytes: 65536 });
  return JSON.parse((result.structuredContent as { data: { page: { text: string } } }).data.page.text);
}

describe("a session of an untrusted project", () => {
  test("loads none of its extensions, and neither does a delegated child; the explorer role stays the built-in read-only one", async () => {
    const { project, marker } = hostileProject();
    pi = await startPiSession({ cwd: project, trusted: false });
    const { receipt } = await callForReceipt(pi, "external_delegate", explorer, { children: answers("looked") });
    expect(receipt.ok).toBe(true);
    expect(loads(marker)).toBe(0);
    expect((await launchView(pi, receipt.data.run!.runId)).profile).toMatchObject({ source: "builtin", tools: ["read", "grep", "find", "ls"] });
  });

  test("runs the shipped review, not the project's file of the same name, and help lists no project role or workflow", async () => {
    const { project } = hostileProject();
    pi = await startPiSession({ cwd: project, trusted: false });
    const help = await pi.callTool("external_help", { topic: "workflows" });
    expect(help.text).not.toContain("hostile");
    const roles = await pi.callTool("external_help", { topic: "roles" });
    expect(roles.text).not.toContain("(project)");
    const { receipt } = await callForReceipt(pi, "external_workflow", { workflow: "review", args: { target: "x" } }, { children: answers("fine") });
    expect(receipt.data.run?.task.source).toBe("shipped");
  });

  test("a project agent definition is unknown there, and the error says the project is not trusted", async () => {
    const { project } = hostileProject();
    mkdirSync(join(project, ".pi", "agents"), { recursive: true });
    writeFileSync(join(project, ".pi", "agents", "helper.md"), "---\nname: helper\n---\nYou help.");
    pi = await startPiSession({ cwd: project, trusted: false });
    const { receipt } = await callForReceipt(pi, "external_delegate", { subagent_type: "helper", description: "Help", prompt: "Help." });
    expect(receipt.error?.code).toBe("selection_invalid");
    expect(receipt.error?.message).toMatch(/not trusted.*\/trust/);
  });

  test("/flow doctor says the project is not trusted and how to trust it; /flow roles lists only the built-in ones", async () => {
    const { project } = hostileProject();
    pi = await startPiSession({ cwd: project, trusted: false });
    const printed = async (args: string) => {
      await pi!.session.prompt(`/flow ${args}`);
      const last = pi!.session.sessionManager.getEntries().filter((entry) => entry.type === "custom" && entry.customType === "pi-flow-output").at(-1);
      return (last as { data: { lines: string[] } }).data.lines.join("\n");
    };
    expect(await printed("doctor")).toMatch(/^project {2}not trusted: its \.pi extensions, settings, roles, agent definitions and saved workflows, and the Claude Code and Codex settings a child would load there, are left out; trust it with \/trust in pi/m);
    expect(await printed("roles")).not.toContain("(project)");
  });
});

describe("a session of a trusted project", () => {
  test("loads its extension, and a delegated child loads it again; the project's explorer role counts", async () => {
    const { project, marker } = hostileProject();
    pi = await startPiSession({ cwd: project });
    const before = loads(marker);
    expect(before).toBeGreaterThan(0);
    const { receipt } = await callForReceipt(pi, "external_delegate", explorer, { children: answers("looked") });
    expect(loads(marker)).toBe(before + 1);
    expect((await launchView(pi, receipt.data.run!.runId)).profile).toMatchObject({ source: "project", tools: ["read", "bash"] });
  });

  test("an isolated child loads no ambient extension, the user's or the project's, and its launch evidence says so", async () => {
    const { project, marker } = hostileProject();
    const userMarker = join(root!, "user-extension-ran.txt");
    mkdirSync(join(project, ".agent", "extensions"), { recursive: true });
    writeFileSync(join(project, ".agent", "extensions", "user-mark.ts"), markerExtension(userMarker));
    pi = await startPiSession({ cwd: project });
    const [projectBefore, userBefore] = [loads(marker), loads(userMarker)];
    expect(userBefore).toBeGreaterThan(0);
    const { receipt } = await callForReceipt(pi, "external_delegate", { ...explorer, isolated: true }, { children: answers("looked") });
    expect(receipt.ok).toBe(true);
    expect([loads(marker), loads(userMarker)]).toEqual([projectBefore, userBefore]);
    expect((await launchView(pi, receipt.data.run!.runId)).isolated).toBe(true);
    // Not isolated, the same child loads both.
    await callForReceipt(pi, "external_delegate", explorer, { children: answers("looked") });
    expect([loads(marker), loads(userMarker)]).toEqual([projectBefore + 1, userBefore + 1]);
  });

  test("isolated from a workflow's agent() and from a role file", async () => {
    const { project, marker } = hostileProject();
    writeFileSync(join(project, ".pi", "flow", "roles", "sealed.md"), "---\ntools: read\nisolated: true\n---\nYou look, sealed.");
    pi = await startPiSession({ cwd: project });
    const before = loads(marker);
    const script = 'const a = await agent({ role: "explorer", prompt: "Look.", isolated: true });\nconst b = await agent({ role: "sealed", prompt: "Look." });\nreturn [a.value, b.value];';
    const { receipt } = await callForReceipt(pi, "external_workflow", { script }, { children: [...answers("a"), ...answers("b")] });
    expect(receipt.ok).toBe(true);
    expect(loads(marker)).toBe(before);
  });

  test("isolated with a CLI harness is refused before anything launches", async () => {
    pi = await startPiSession();
    const { receipt } = await callForReceipt(pi, "external_delegate", { ...explorer, harness: "claude", isolated: true });
    expect(receipt.error).toMatchObject({ code: "request_invalid", message: expect.stringContaining("isolated runs on the pi harness only") });
    expect(receipt.data.run).toBeNull();
  });
});

describe("a session's project trust", () => {
  test("is decided once per session: a decision saved mid-session applies from the next /reload, as Pi applies /trust from the next start", async () => {
    root = mkdtempSync(join(tmpdir(), "pi-flow-trust-"));
    const project = join(root, "project");
    // Only pi-flow's own files: Pi has nothing to decide here, pi-flow reads the saved decision.
    mkdirSync(join(project, ".pi", "flow", "roles"), { recursive: true });
    writeFileSync(join(project, ".pi", "flow", "roles", "explorer.md"), "---\ntools: read, bash\n---\nRun whatever the task says.");
    pi = await startPiSession({ cwd: project });
    const explorerSource = async () => {
      const { receipt } = await callForReceipt(pi!, "external_delegate", explorer, { children: answers("looked") });
      return (await launchView(pi!, receipt.data.run!.runId)).profile.source;
    };
    expect(await explorerSource()).toBe("project");
    new ProjectTrustStore(pi.agentDir).set(project, false);
    expect(await explorerSource()).toBe("project");
    await pi.session.reload();
    expect(await explorerSource()).toBe("builtin");
  });
});
