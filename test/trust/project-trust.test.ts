import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { ProjectTrustStore } from "@earendil-works/pi-coding-agent";
import { childProjectTrusted, resolveProjectTrust, sessionProjectTrusted } from "../../src/trust/project-trust.ts";

/** Pi 1.6's order for `pi -p`: override, then the saved decision (nearest folder), then defaultProjectTrust. */
let root: string;
let agentDir: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "pi-flow-trust-unit-"));
  agentDir = join(root, "agent");
  mkdirSync(agentDir);
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function project(name: string, ...files: string[]): string {
  const dir = join(root, name);
  for (const file of files) {
    mkdirSync(join(dir, file, ".."), { recursive: true });
    writeFileSync(join(dir, file), "x");
  }
  mkdirSync(dir, { recursive: true });
  return dir;
}

describe("resolveProjectTrust", () => {
  test("a project with nothing to protect is trusted; one with .pi/extensions or pi-flow's role files is not, with no saved decision", () => {
    expect(resolveProjectTrust(project("plain", "README.md"), agentDir)).toBe(true);
    expect(resolveProjectTrust(project("ext", ".pi/extensions/a.ts"), agentDir)).toBe(false);
    expect(resolveProjectTrust(project("roles", ".pi/flow/roles/explorer.md"), agentDir)).toBe(false);
    expect(resolveProjectTrust(project("agents", ".pi/agents/helper.md"), agentDir)).toBe(false);
    // Agent definitions in a folder above take that folder's own decision (agent-definitions.ts), not this project's.
    expect(resolveProjectTrust(project("agents/below", "README.md"), agentDir)).toBe(true);
  });

  test("Claude Code's and Codex's project files need a decision too, in the folder or above it, but not the home folder's own", () => {
    // Claude Code's skills, commands and agents are what Pi's own .pi/skills, .pi/prompts and agent definitions are.
    const files = [".claude/settings.json", ".claude/settings.local.json", ".mcp.json", ".codex/config.toml", ".claude/skills/deploy/SKILL.md", ".claude/commands/ship.md", ".claude/agents/helper.md"];
    for (const file of files) {
      expect(resolveProjectTrust(project(`cli-${file.replace(/\W/g, "-")}`, file), agentDir), file).toBe(false);
    }
    expect(resolveProjectTrust(project("below/sub", "README.md"), agentDir)).toBe(true);
    project("below", ".claude/settings.json");
    expect(resolveProjectTrust(join(root, "below", "sub"), agentDir)).toBe(false);
    const home = project("home", ".claude/settings.json", ".codex/config.toml");
    const previous = process.env.HOME;
    process.env.HOME = home;
    try {
      expect(resolveProjectTrust(project("home/code", "README.md"), agentDir)).toBe(true);
    } finally {
      process.env.HOME = previous;
    }
  });

  test("a saved decision for the folder or a parent decides, and an override beats it", () => {
    const dir = project("saved", ".pi/flow/workflows/w.js");
    new ProjectTrustStore(agentDir).set(root, true);
    expect(resolveProjectTrust(dir, agentDir)).toBe(true);
    expect(resolveProjectTrust(dir, agentDir, false)).toBe(false);
    new ProjectTrustStore(agentDir).set(dir, false);
    expect(resolveProjectTrust(dir, agentDir)).toBe(false);
    expect(resolveProjectTrust(dir, agentDir, true)).toBe(true);
  });

  test("defaultProjectTrust \"always\" in the user's settings trusts; \"ask\" has no one to ask, so it does not", () => {
    const dir = project("default", ".pi/settings.json");
    writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ defaultProjectTrust: "always" }));
    expect(resolveProjectTrust(dir, agentDir)).toBe(true);
    writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ defaultProjectTrust: "ask" }));
    expect(resolveProjectTrust(dir, agentDir)).toBe(false);
  });
});

test("a trust store Pi cannot read is configuration_invalid, naming it", () => {
  writeFileSync(join(agentDir, "trust.json"), "{ not json");
  expect(() => resolveProjectTrust(project("broken-store", ".pi/settings.json"), agentDir)).toThrow(
    expect.objectContaining({ code: "configuration_invalid", message: expect.stringContaining("trust store") }),
  );
});

describe("in a Pi session", () => {
  test("Pi's no is final; Pi's yes for a project with only pi-flow's files still needs a saved decision", () => {
    const flowOnly = project("flow-only", ".pi/flow/roles/r.md");
    expect(sessionProjectTrusted(flowOnly, agentDir, false)).toBe(false);
    expect(sessionProjectTrusted(flowOnly, agentDir, true)).toBe(false);
    new ProjectTrustStore(agentDir).set(flowOnly, true);
    expect(sessionProjectTrusted(flowOnly, agentDir, true)).toBe(true);
    expect(sessionProjectTrusted(project("pi-decided", ".pi/extensions/a.ts"), agentDir, true)).toBe(true);
  });

  test("a child in another folder loads its resources only when both its parent's project and that folder are trusted", () => {
    const parent = project("parent", ".pi/extensions/a.ts");
    const other = project("other", ".pi/extensions/b.ts");
    expect(childProjectTrusted({ cwd: parent, trusted: true }, parent, agentDir)).toBe(true);
    expect(childProjectTrusted({ cwd: parent, trusted: false }, parent, agentDir)).toBe(false);
    expect(childProjectTrusted({ cwd: parent, trusted: true }, other, agentDir)).toBe(false);
    new ProjectTrustStore(agentDir).set(other, true);
    expect(childProjectTrusted({ cwd: parent, trusted: true }, other, agentDir)).toBe(true);
    expect(childProjectTrusted({ cwd: parent, trusted: false }, other, agentDir)).toBe(false);
    // A cloned repository whose hooks a claude child would run: nothing Pi protects, still its own decision.
    expect(childProjectTrusted({ cwd: parent, trusted: true }, project("cloned", ".claude/settings.json"), agentDir)).toBe(false);
  });
});
