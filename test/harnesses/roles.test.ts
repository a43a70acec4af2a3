import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { ProjectTrustStore } from "@earendil-works/pi-coding-agent";
import { agentDefinitionDirs, resolveAgentDefinition } from "../../src/harnesses/agent-definitions.ts";
import { BUILTIN_ROLES, listRoles, resolveRole, roleDirs } from "../../src/harnesses/roles.ts";

function dirs() {
  const root = mkdtempSync(join(tmpdir(), "pi-flow-roles-"));
  const project = join(root, "project");
  const flowUser = join(root, "flow-home");
  mkdirSync(join(project, ".pi", "flow", "roles"), { recursive: true });
  mkdirSync(join(flowUser, "roles"), { recursive: true });
  return { root, project, flowUser, roles: roleDirs(project, flowUser, true) };
}

describe("roles", () => {
  test("worker, explorer and reviewer are built in, each with a prompt, tools and a default context", () => {
    const { roles } = dirs();
    for (const name of ["worker", "explorer", "reviewer"]) {
      const role = resolveRole(name, roles);
      expect(role.systemPrompt.length).toBeGreaterThan(20);
      expect(role.tools?.length).toBeGreaterThan(0);
      expect(role.source).toBe("builtin");
    }
    expect(resolveRole("explorer", roles).tools).not.toContain("edit");
    expect(resolveRole("reviewer", roles).defaultContext).toEqual({ mode: "none" });
    expect(resolveRole("worker", roles).tools).toContain("edit");
  });

  test("a project file overrides a user file, which overrides a built-in role, inheriting what it does not say", () => {
    const { roles, project, flowUser } = dirs();
    writeFileSync(join(flowUser, "roles", "reviewer.md"), "---\nmodel: faux/user-model\n---\nUser reviewer prompt.");
    expect(resolveRole("reviewer", roles)).toMatchObject({ source: "user", systemPrompt: "User reviewer prompt.", tools: BUILTIN_ROLES.reviewer!.tools });
    writeFileSync(join(project, ".pi", "flow", "roles", "reviewer.md"), "---\ncontext: recent:3\ntools: [read]\n---\nProject reviewer prompt.");
    expect(resolveRole("reviewer", roles)).toMatchObject({
      source: "project",
      systemPrompt: "Project reviewer prompt.",
      tools: ["read"],
      defaultContext: { mode: "recent", turns: 3 },
    });
  });

  test("role files add new roles, found by file name or by the name in their frontmatter", () => {
    const { roles, project } = dirs();
    writeFileSync(join(project, ".pi", "flow", "roles", "sec.md"), "---\nname: security\ndescription: Audits\ntools: read, grep\n---\nAudit carefully.");
    expect(resolveRole("security", roles)).toMatchObject({ name: "security", tools: ["read", "grep"], defaultContext: { mode: "none" } });
    expect(resolveRole("sec", roles).name).toBe("security");
    expect(listRoles(roles)).toEqual(["explorer", "reviewer", "sec", "worker"]);
  });

  test("a new role file without tools gets Pi's default tools, not none", () => {
    const { roles, project } = dirs();
    writeFileSync(join(project, ".pi", "flow", "roles", "writer.md"), "---\ndescription: Writes docs\n---\nWrite docs.");
    expect(resolveRole("writer", roles).tools).toBeUndefined();
  });

  test("an unknown role is selection_invalid and names the known ones", () => {
    expect(() => resolveRole("nonexistent_role", dirs().roles)).toThrow(
      expect.objectContaining({ code: "selection_invalid", message: expect.stringContaining("explorer, reviewer, worker") }),
    );
  });

  test("a malformed role file is configuration_invalid, naming the file", () => {
    const { roles, project } = dirs();
    writeFileSync(join(project, ".pi", "flow", "roles", "broken.md"), "---\ncontext: sometimes\n---\nPrompt.");
    expect(() => resolveRole("broken", roles)).toThrow(expect.objectContaining({ code: "configuration_invalid", message: expect.stringContaining("broken.md") }));
    writeFileSync(join(project, ".pi", "flow", "roles", "empty.md"), "---\ndescription: nothing\n---\n");
    expect(() => resolveRole("empty", roles)).toThrow(expect.objectContaining({ code: "configuration_invalid" }));
  });
});

describe("Pi agent definitions", () => {
  test("subagent_type finds the nearest project .pi/agents, then the agent directory, and always runs on pi", () => {
    const { root, project } = dirs();
    const agentDir = join(root, "agent");
    mkdirSync(join(agentDir, "agents"), { recursive: true });
    mkdirSync(join(project, ".pi", "agents"), { recursive: true });
    writeFileSync(join(agentDir, "agents", "scout.md"), "---\nname: scout\ndescription: Scouts\ntools: read\n---\nUser scout.");
    writeFileSync(join(project, ".pi", "agents", "scout.md"), "---\nname: scout\ndescription: Scouts\n---\nProject scout.");
    const nested = join(project, "src", "deep");
    mkdirSync(nested, { recursive: true });
    // The project's .pi/agents is above the working folder: it counts with the project's own decision.
    new ProjectTrustStore(agentDir).set(project, true);
    const found = resolveAgentDefinition("scout", agentDefinitionDirs(nested, agentDir, true));
    expect(found).toMatchObject({ systemPrompt: "Project scout.", source: "project", harness: "pi" });
    expect(() => resolveAgentDefinition("planner", agentDefinitionDirs(nested, agentDir, true))).toThrow(
      expect.objectContaining({ code: "selection_invalid", message: expect.stringContaining("Known: scout") }),
    );
  });

  test("an ancestor's .pi/agents (a shared folder above many projects) counts only once that folder is trusted itself; the home folder's are the user's", () => {
    const { root } = dirs();
    const agentDir = join(root, "agent");
    const shared = join(root, "shared");
    const project = join(shared, "project");
    mkdirSync(join(shared, ".pi", "agents"), { recursive: true });
    mkdirSync(project, { recursive: true });
    writeFileSync(join(shared, ".pi", "agents", "planted.md"), "---\nname: planted\ntools: bash\n---\nPlanted by whoever writes the shared folder.");
    // The user trusted their own project, not the shared folder above it.
    new ProjectTrustStore(agentDir).set(project, true);
    expect(() => resolveAgentDefinition("planted", agentDefinitionDirs(project, agentDir, true))).toThrow(
      expect.objectContaining({ code: "selection_invalid", message: expect.stringContaining(`${join(shared, ".pi", "agents")} are not read: that folder is not trusted`) }),
    );
    new ProjectTrustStore(agentDir).set(shared, true);
    expect(resolveAgentDefinition("planted", agentDefinitionDirs(project, agentDir, true))).toMatchObject({ source: "project" });
    expect(agentDefinitionDirs(project, agentDir, false).project).toBeUndefined();
    // The home folder's own .pi/agents need no decision of their own in a trusted project below it.
    const previous = process.env.HOME;
    process.env.HOME = project;
    const below = join(project, "code");
    mkdirSync(join(project, ".pi", "agents"), { recursive: true });
    mkdirSync(below, { recursive: true });
    writeFileSync(join(project, ".pi", "agents", "mine.md"), "---\nname: mine\n---\nThe user's own.");
    new ProjectTrustStore(agentDir).set(project, false);
    try {
      expect(resolveAgentDefinition("mine", agentDefinitionDirs(below, agentDir, true))).toMatchObject({ systemPrompt: "The user's own." });
    } finally {
      process.env.HOME = previous;
    }
  });
});
