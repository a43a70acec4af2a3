// A role file's YAML error is shown to the model (a rejected call, external_help's `problem`), kept
// in records and drawn in the TUI. The YAML parser's own message quotes the failing lines, and a
// role file can hold a key on the very line that fails: the message must not carry it.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { FlowError } from "../../src/contract/errors.ts";
import { resolveRole, roleDirs } from "../../src/harnesses/roles.ts";
import { readCatalog } from "../../src/orchestrator/workflow/catalog.ts";

const root = mkdtempSync(join(tmpdir(), "pi-flow-profile-errors-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const project = join(root, "project");
const flowHome = join(root, "flow-home");
mkdirSync(join(project, ".pi", "flow", "roles"), { recursive: true });
mkdirSync(join(flowHome, "roles"), { recursive: true });
const roles = roleDirs(project, flowHome, true);

const KEY = "sk-live-4f9aQ2xZ7bN1mK8pR3tV6wY0cE5hJ2lD";
const PASSWORD = "hunter2-Is-Not-Great";

function refusal(name: string): { code: string; message: string } {
  try {
    resolveRole(name, roles);
  } catch (error) {
    if (error instanceof FlowError) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error(`${name} resolved`);
}

test("a role file whose YAML fails on a line holding a secret is configuration_invalid without the secret, its line counted in the file", () => {
  // Line 4 of the file (the YAML's third line) fails: a flow list never closed, holding the key.
  writeFileSync(join(project, ".pi", "flow", "roles", "leaky.md"), `---\nname: leaky\ndescription: d\napi_key: [${KEY}\n---\nPrompt.\n`);
  // A quote never closed, on the password's own line.
  writeFileSync(join(project, ".pi", "flow", "roles", "quoted.md"), `---\nname: quoted\ndb_password: "${PASSWORD}\n---\nPrompt.\n`);
  // A block scalar's header with text after it: the parser's first line quotes that text.
  writeFileSync(join(project, ".pi", "flow", "roles", "header.md"), `---\nname: header\npassword: |x${KEY}\n  more\n---\nPrompt.\n`);
  for (const [name, secret] of [["leaky", KEY], ["quoted", PASSWORD], ["header", KEY]] as const) {
    const { code, message } = refusal(name);
    expect(code).toBe("configuration_invalid");
    expect(message).toContain(`${name}.md`);
    expect(message).not.toContain(secret.slice(0, 12));
    expect(message).not.toContain(secret.slice(-8));
    expect(message).toMatch(/line \d+, column \d+/);
  }
  // The parser counts from the line after the opening `---`; the message counts in the file.
  expect(refusal("leaky").message).toMatch(/line 4, column \d+/);
  // external_help lists the role with its problem: the same message, no secret.
  const listed = readCatalog(project, flowHome, true).roles.find((role) => role.name === "leaky");
  expect(listed?.problem).toBe(refusal("leaky").message);
});
