import { cpSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { ProjectTrustStore } from "@earendil-works/pi-coding-agent";
import { flowInProcess } from "./in-process.ts";
import { ECHO_EXTENSION, flowSandbox, PROJECT_ROOT, shell } from "./support.ts";

/**
 * docs/workflows.md's authoring loop, as an author in a fresh project runs it: the workflow file
 * and the shell commands are taken from the doc and run verbatim, with pi-flow and TypeScript
 * installed in the project's node_modules/.bin the way `npm install -D pi-flow typescript` puts them.
 */
const sandbox = flowSandbox();
afterAll(() => sandbox.dispose());
// An author has Pi set up with a provider. This workflow starts no child, so no model is ever asked.
sandbox.env.ANTHROPIC_API_KEY = "sk-ant-authoring-loop";

const doc = readFileSync(join(PROJECT_ROOT, "docs/workflows.md"), "utf8");
const section = doc.slice(doc.indexOf("## Writing a workflow"), doc.indexOf("\n## ", doc.indexOf("## Writing a workflow") + 1));
const script = /```js\n([\s\S]*?)```/.exec(section)?.[1] ?? "";
const commands = (/```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? "").split("\n").filter((line) => line.trim() !== "");
const scriptPath = /^\/\/ (\S+)\n/.exec(script)?.[1] ?? "";

const project = join(sandbox.root, "project");
mkdirSync(join(project, "node_modules", ".bin"), { recursive: true });
writeFileSync(join(project, "package.json"), JSON.stringify({ name: "authoring-project", private: true, devDependencies: { "pi-flow": "*", typescript: "*" } }));
symlinkSync(join(PROJECT_ROOT, "bin", "flow.js"), join(project, "node_modules", ".bin", "flow"));
symlinkSync(join(PROJECT_ROOT, "node_modules", "typescript", "bin", "tsc"), join(project, "node_modules", ".bin", "tsc"));

/** A command from the doc, run verbatim in the project as the author's shell runs it. */
const inProject = (command: string) => shell(command, { cwd: project, env: sandbox.env });

describe("docs/workflows.md: the authoring loop", () => {
  test("the doc gives a workflow file and the loop flow types, tsc, flow check, flow run", () => {
    expect(scriptPath).toBe(".pi/flow/workflows/session-runs.js");
    expect(commands.map((line) => line.split(" ").slice(0, 3).join(" "))).toEqual(["npx flow types", "npx tsc -p", "npx flow check", "npx flow run"]);
  });

  test("each command, run verbatim in a fresh project, succeeds; a mistake is caught by the type-check", async () => {
    mkdirSync(join(project, ".pi", "flow", "workflows"), { recursive: true });
    writeFileSync(join(project, scriptPath), script);
    // The author trusted the project once, as `/trust` in pi saves it: its saved workflows count.
    new ProjectTrustStore(sandbox.agentDir).set(project, true);
    const [types, typecheck, check, run] = commands as [string, string, string, string];

    const typed = await inProject(types);
    expect(typed.stderr).toMatch(/flow types: wrote \.pi\/flow\/workflows\/flow\.d\.ts: \d+ tools, 5 saved workflows/);
    expect(typed.code).toBe(0);
    expect(existsSync(join(project, ".pi/flow/workflows/tsconfig.json"))).toBe(true);
    const declarations = readFileSync(join(project, ".pi/flow/workflows/flow.d.ts"), "utf8");
    expect(declarations).toContain('"session-runs": SessionRunsWorkflowArgs;');
    // Pi's built-ins come typed from their schemas too.
    expect(declarations).toMatch(/\n {2}read\(args: ReadInput\): Promise<\w+>;/);

    expect(await inProject(typecheck)).toMatchObject({ code: 0, stdout: "" });
    const checked = await inProject(check);
    expect(checked.stderr).toMatch(/flow check: 1 file ok/);
    expect(checked.code).toBe(0);
    const ran = await inProject(run);
    expect(ran.stderr).toMatch(/succeeded/);
    expect(ran.code).toBe(0);
    const rows = JSON.parse(ran.stdout) as Array<{ kind: string; status: string; task: string }>;
    expect(rows).toContainEqual(expect.objectContaining({ kind: "workflow", status: "running" }));

    // The editor's view of a mistake: a misspelt argument, tool argument and result field.
    writeFileSync(
      join(project, scriptPath),
      script.replace("args.limit ?? 20", "args.lmit ?? 20").replace('action: "list"', 'action: "lsit"').replace("run.state.status,", "run.state.stauts,"),
    );
    const broken = await inProject(typecheck);
    expect(broken.code).not.toBe(0);
    expect(broken.stdout).toMatch(/session-runs\.js\(\d+,\d+\): error TS\d+: .*lmit/);
    expect(broken.stdout).toMatch(/session-runs\.js\(\d+,\d+\): error TS\d+: .*"lsit"/);
    expect(broken.stdout).toMatch(/session-runs\.js\(\d+,\d+\): error TS\d+: .*stauts/);
    // Six real processes in a row (npx, tsc twice, a Pi session): a busy machine can take minutes.
  }, 240_000);
});

describe("flow types", () => {
  test("types a --extension tool from its schemas, keeps an existing tsconfig, and writes --out where asked", async () => {
    const elsewhere = join(sandbox.root, "elsewhere");
    mkdirSync(join(elsewhere, ".pi", "flow", "workflows"), { recursive: true });
    writeFileSync(join(elsewhere, ".pi/flow/workflows/tsconfig.json"), "{}\n");
    const result = await flowInProcess(["types", "--cwd", elsewhere, "--extension", ECHO_EXTENSION], { env: sandbox.env });
    expect(result.code).toBe(0);
    const declarations = readFileSync(join(elsewhere, ".pi/flow/workflows/flow.d.ts"), "utf8");
    expect(declarations).toContain("flow_test_echo(args: FlowTestEchoInput): Promise<FlowTestEchoOutput>;");
    expect(declarations).toMatch(/interface FlowTestEchoOutput \{\n {2}echoed: string;\n\}/);
    expect(readFileSync(join(elsewhere, ".pi/flow/workflows/tsconfig.json"), "utf8")).toBe("{}\n");

    const out = join(sandbox.root, "types", "my.d.ts");
    // --out into a folder that does not exist is refused, not created.
    const refused = await flowInProcess(["types", "--cwd", elsewhere, "--out", out], { env: sandbox.env });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/--out .*my\.d\.ts: the folder .*types does not exist.*\(request_invalid\)/);
    expect(existsSync(join(sandbox.root, "types"))).toBe(false);
    mkdirSync(join(sandbox.root, "types"));
    expect((await flowInProcess(["types", "--cwd", elsewhere, "--out", out], { env: sandbox.env })).code).toBe(0);
    expect(readFileSync(out, "utf8")).toContain("interface FlowWorkflowArgs {");
    expect(existsSync(join(sandbox.root, "types", "tsconfig.json"))).toBe(false);
  });

  test("a trusted project's extension that fails to load is named on stderr and left out; the other tools are still declared", async () => {
    const project = join(sandbox.root, "with-broken-extension");
    mkdirSync(join(project, ".pi", "extensions"), { recursive: true });
    writeFileSync(join(project, ".pi/extensions/broken.ts"), 'throw new Error("broken on purpose");\n');
    const result = await flowInProcess(["types", "--cwd", project, "--approve"], { env: sandbox.env });
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/flow types: an extension did not load, its tools are left out: .*broken\.ts: .*broken on purpose/);
    const declarations = readFileSync(join(project, ".pi/flow/workflows/flow.d.ts"), "utf8");
    expect(declarations).toContain("external_delegate(args: ExternalDelegateInput)");
  });

  test("a --cwd that is not a directory is refused before anything is written, by types and by check (exit 2)", async () => {
    const typo = join(sandbox.root, "no-such-project");
    const types = await flowInProcess(["types", "--cwd", typo], { env: sandbox.env });
    expect(types.code).toBe(2);
    expect(types.stderr).toContain(`--cwd ${typo} is not a directory`);
    expect(existsSync(typo)).toBe(false);
    const check = await flowInProcess(["check", "--cwd", typo, join(PROJECT_ROOT, "workflows", "review.js")], { env: sandbox.env });
    expect(check.code).toBe(2);
    expect(check.stderr).toContain(`--cwd ${typo} is not a directory`);
  });

  test("a saved workflow that cannot run is left out, and says why; the tsc command printed pastes whole although the path has a space", async () => {
    const broken = join(sandbox.root, "broken project");
    cpSync(join(PROJECT_ROOT, "examples", "quickstart"), broken, { recursive: true });
    mkdirSync(join(broken, ".pi", "flow", "workflows"), { recursive: true });
    writeFileSync(join(broken, ".pi/flow/workflows/bad.js"), "export const apiVersion = 1;\nexport const meta = { limit: {} };\n");
    const result = await flowInProcess(["types", "--cwd", broken, "--approve"], { env: sandbox.env });
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/workflow bad \(project\) is left out: unknown meta key `limit`; did you mean `limits`\?/);
    expect(readFileSync(join(broken, ".pi/flow/workflows/flow.d.ts"), "utf8")).not.toContain("BadWorkflowArgs");
    // The shell splits the pasted hint into these words: the folder stays one argument.
    const hint = /type-check this folder with (npx tsc -p .+)$/m.exec(result.stderr)?.[1] ?? "";
    const words = await shell(`printf '%s\\0' ${hint}`, { env: sandbox.env });
    const [npx, tsc, flag, folder = "", ...rest] = words.stdout.split("\0").slice(0, -1);
    expect([npx, tsc, flag, rest]).toEqual(["npx", "tsc", "-p", []]);
    expect(resolve(PROJECT_ROOT, folder)).toBe(join(broken, ".pi", "flow", "workflows"));
  });
});
