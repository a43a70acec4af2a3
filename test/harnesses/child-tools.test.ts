import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { boundChildTools, writes } from "../../src/harnesses/child-tools.ts";
import { claudeTools } from "../../src/harnesses/cli/claude.ts";
import { isReadOnlyProfile } from "../../src/harnesses/cli/cli-harness.ts";
import { BUILTIN_ROLES, resolveRole, roleDirs } from "../../src/harnesses/roles.ts";

/** The bound of issue 21: a child's tools are its profile's within the parent's, minus its deny list. */

const READ_ONLY_PARENT = ["read", "codemode", "external_delegate", "external_workflow", "external_runs", "external_help"];
const PI_DEFAULT_PARENT = ["read", "bash", "edit", "write", "codemode", "external_delegate"];

describe("a child's tools within the parent's", () => {
  test("a worker under a read-only parent keeps only what reads: write, edit and bash are withheld", () => {
    expect(boundChildTools(BUILTIN_ROLES.worker!, READ_ONLY_PARENT)).toEqual({
      effective: ["read", "grep", "find", "ls"],
      withheld: ["bash", "edit", "write"],
      denied: [],
    });
  });

  test("under Pi's default tools a worker keeps all its tools: grep, find and ls are within read's authority", () => {
    expect(boundChildTools(BUILTIN_ROLES.worker!, PI_DEFAULT_PARENT)).toEqual({
      effective: ["read", "bash", "edit", "write", "grep", "find", "ls"],
      withheld: [],
      denied: [],
    });
  });

  test("a parent without read lends no search tools either", () => {
    expect(boundChildTools(BUILTIN_ROLES.explorer!, ["bash"])).toEqual({ effective: [], withheld: ["read", "grep", "find", "ls"], denied: [] });
  });

  test("a tool a role names after an Object method (constructor, toString, __proto__) is a name like any other", () => {
    const odd = ["constructor", "toString", "__proto__", "hasOwnProperty"];
    expect(boundChildTools({ tools: [...odd, "read"], disallowedTools: ["valueOf"] }, [...READ_ONLY_PARENT, "toString"])).toEqual({
      effective: ["toString", "read"],
      withheld: ["constructor", "__proto__", "hasOwnProperty"],
      denied: [],
    });
    expect(writes(odd)).toBe(false);
    // Claude Code is given the same names: its own for Pi's tools, any other as it is.
    expect(claudeTools(["read", ...odd])).toEqual(["Read", ...odd]);
  });

  test("a parent tool named +name, -name or with a * is never lent, by name or by pattern: Pi would read it as a change to its default tools, or a pattern", () => {
    expect(boundChildTools({ tools: ["read", "+write", "-read", "*"] }, ["read", "+write", "-read", "b*"])).toEqual({
      effective: ["read", "grep", "find", "ls"],
      withheld: ["+write", "-read", "b*"],
      denied: [],
    });
  });

  test("no tools list means Pi's default tools, bounded the same way", () => {
    expect(boundChildTools({}, READ_ONLY_PARENT)).toEqual({ effective: ["read"], withheld: ["bash", "edit", "write"], denied: [] });
  });

  test("disallowedTools takes tools away by name or pattern, after the parent's bound", () => {
    const parent = [...PI_DEFAULT_PARENT, "mcp__db__query", "mcp__db__drop"];
    const tools = boundChildTools({ tools: ["read", "bash", "write", "mcp__db__*", "deploy"], disallowedTools: ["bash", "*drop"] }, parent);
    expect(tools).toEqual({ effective: ["read", "write", "mcp__db__query"], withheld: ["deploy"], denied: ["bash", "mcp__db__drop"] });
  });

  test("a Claude Code permission rule in disallowedTools (Bash(rm:*)) takes the whole tool away: pi-flow cannot hold a child to part of one", () => {
    const parent = [...PI_DEFAULT_PARENT, "mcp__db__query"];
    const tools = boundChildTools({ tools: ["read", "bash", "edit", "write", "mcp__db__query"], disallowedTools: ["Bash(rm:*)", "Write(./secrets/**)", "mcp__db__query(*)"] }, parent);
    expect(tools).toEqual({ effective: ["read", "edit"], withheld: [], denied: ["bash", "write", "mcp__db__query"] });
    expect(boundChildTools({ tools: ["read", "bash"], disallowedTools: ["bash(git push:*)"] }, PI_DEFAULT_PARENT).effective).toEqual(["read"]);
  });

  test("Claude Code's names for Pi's tools in a profile mean Pi's tools", () => {
    expect(boundChildTools({ tools: ["Read", "Glob", "Bash"] }, READ_ONLY_PARENT)).toEqual({ effective: ["read", "find"], withheld: ["bash"], denied: [] });
  });

  test("a CLI child runs read-only exactly when its tools neither write, edit nor run commands", () => {
    expect(writes(["read", "grep"])).toBe(false);
    expect(writes(["read", "Bash"])).toBe(true);
    expect(isReadOnlyProfile({ ...BUILTIN_ROLES.worker!, tools: ["read", "grep", "find", "ls"] })).toBe(true);
    expect(isReadOnlyProfile({ ...BUILTIN_ROLES.worker!, tools: [] })).toBe(true);
    expect(isReadOnlyProfile({ ...BUILTIN_ROLES.explorer!, tools: undefined })).toBe(false);
  });
});

describe("disallowedTools in a role file", () => {
  test("is read as a list, inherited like tools, and a malformed one is configuration_invalid naming the file", () => {
    const project = mkdtempSync(join(tmpdir(), "pi-flow-deny-"));
    const dir = join(project, ".pi", "flow", "roles");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "careful.md"), "---\ntools: read, bash, write\ndisallowedTools: bash\n---\nBe careful.");
    writeFileSync(join(dir, "broken.md"), "---\ndisallowedTools: 3\n---\nBroken.");
    const dirs = roleDirs(project, join(project, "user"), true);
    expect(resolveRole("careful", dirs)).toMatchObject({ tools: ["read", "bash", "write"], disallowedTools: ["bash"] });
    expect(() => resolveRole("broken", dirs)).toThrow(expect.objectContaining({ code: "configuration_invalid", message: "broken.md: disallowedTools must be a list of tool names." }));
  });
});
