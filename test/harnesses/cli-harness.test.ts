import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { FAKE_CLI_BIN, fakeRuns, isAlive, pathWithFakes, pidsOf } from "../support/fake-cli.ts";
import { CliWorkspace } from "./cli-support.ts";

let ws: CliWorkspace;
beforeEach(() => {
  ws = new CliWorkspace();
});
afterEach(() => ws.dispose());

const sessionOf = (diagnostics: { type: string }[]) =>
  diagnostics.find((entry): entry is { type: "session"; harness: string; sessionId: string } => entry.type === "session");

describe("a child that answers", () => {
  test("claude: the answer, streamed text, tool calls, turns, usage, cost and the CLI's session", async () => {
    const { result, outputs, diagnostics, progress } = await ws.run("claude", { prompt: "Check the parser." });
    expect(result).toMatchObject({ outcome: "succeeded", value: "Claude did it — ✓ Check the parser." });
    expect(result.usage).toEqual({ turns: 2, toolCalls: 1, inputTokens: 280, outputTokens: 42, costUsd: 0.00123 });
    expect(outputs).toEqual(["Let me read the file first.", "Claude did it — ✓ Check the parser."]);
    expect(diagnostics).toContainEqual({ type: "tool_call", tool: "Read", args: expect.stringContaining("hello.txt"), id: "toolu_01" });
    expect(diagnostics).toContainEqual({ type: "tool_result", tool: "Read", isError: false, id: "toolu_01" });
    const [run] = fakeRuns(ws.cwd, "claude");
    expect(sessionOf(diagnostics)).toEqual({ type: "session", harness: "claude", sessionId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(progress.map((entry) => entry.activity)).toEqual(expect.arrayContaining(["started on claude-sonnet-4-5", "calling Read", "thinking"]));
    // The prompt travels on stdin, never on the command line.
    expect(run!.prompt).toBe("Check the parser.");
    expect(run!.argv.join(" ")).not.toContain("Check the parser.");
  });

  test("codex: the last agent message, commands and file changes as tool calls, usage, and the thread id", async () => {
    const { result, outputs, diagnostics } = await ws.run("codex", { prompt: "Check the parser." });
    expect(result).toMatchObject({ outcome: "succeeded", value: "Codex did it — ✓ Check the parser." });
    expect(result.usage).toEqual({ turns: 1, toolCalls: 2, inputTokens: 1200, outputTokens: 300 });
    expect(outputs).toEqual(["Codex did it — ✓ Check the parser."]);
    expect(diagnostics).toContainEqual({ type: "tool_call", tool: "shell", args: "/bin/bash -lc ls", id: "item_1" });
    expect(diagnostics).toContainEqual({ type: "tool_call", tool: "apply_patch", args: expect.stringContaining("add "), id: "item_2" });
    // A "Reconnecting..." error event is kept as a diagnostic and does not fail the run.
    expect(diagnostics).toContainEqual({ type: "error", message: expect.stringContaining("Reconnecting... 1/5") });
    expect(sessionOf(diagnostics)?.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    const [run] = fakeRuns(ws.cwd, "codex");
    expect(run!.prompt).toContain("<role_instructions>\nYou are a worker agent");
    expect(run!.prompt.endsWith("Check the parser.")).toBe(true);
  });
});

describe("roles and options become the CLIs' flags", () => {
  test("claude: a worker gets its tools pre-approved; an explorer runs in plan mode with read tools only", async () => {
    await ws.run("claude", { role: "worker", options: { model: "sonnet" } });
    await ws.run("claude", { role: "explorer" });
    const [worker, explorer] = fakeRuns(ws.cwd, "claude").sort((a, b) => Number(a.argv.includes("--model=sonnet")) - Number(b.argv.includes("--model=sonnet"))).reverse();
    expect(worker!.argv).toEqual(expect.arrayContaining(["-p", "--output-format=stream-json", "--verbose", "--permission-mode=dontAsk", "--model=sonnet"]));
    expect(worker!.argv).toContain("--tools=Read,Bash,Edit,Write,Grep,Glob,LS");
    expect(worker!.argv).toContain("--allowedTools=Read,Bash,Edit,Write,Grep,Glob,LS");
    expect(explorer!.argv).toEqual(expect.arrayContaining(["--permission-mode=plan", "--tools=Read,Grep,Glob,LS"]));
    expect(explorer!.systemPrompt).toMatch(/^You are an explorer agent/);
  });

  test("claude: the role's prompt reaches Claude Code through a private file, never the command line, however long it is", async () => {
    const systemPrompt = `You are a careful agent. Internal codename: bluefin.\n${"Follow the house style. ".repeat(8000)}`;
    const { result } = await ws.run("claude", { systemPrompt });
    expect(result.outcome).toBe("succeeded");
    const [run] = fakeRuns(ws.cwd, "claude");
    expect(run!.systemPrompt).toBe(systemPrompt);
    expect(run!.argv.join(" ")).not.toContain("bluefin");
    expect(run!.argv.find((arg) => arg.startsWith("--append-system-prompt-file="))).toBeDefined();
  });

  test("claude: a parent's tool whose name holds a comma, blank or parenthesis, or is `default` (every built-in tool), cannot smuggle another tool into the child's list", async () => {
    await ws.run("claude", { role: "worker", tools: ["read", "write", "x,Bash", "y Bash", "Bash(rm:*)", "default", "Default"] });
    const [run] = fakeRuns(ws.cwd, "claude");
    expect(run!.argv).toContain("--tools=Read,Write");
    expect(run!.argv).toContain("--allowedTools=Read,Write");
  });

  test("claude: the role's disallowedTools reach Claude Code as --disallowedTools, so an MCP tool the user's Claude settings allow is denied to this child", async () => {
    await ws.run("claude", { role: "worker", tools: ["read", "bash"], disallowedTools: ["mcp__*", "mcp__github", "write", "Bash(rm:*)", "x,Bash"] });
    await ws.run("claude", { role: "reviewer", prompt: "review", tools: ["read"], disallowedTools: ["mcp__*"] });
    const runs = fakeRuns(ws.cwd, "claude");
    const worker = runs.find((run) => run.prompt !== "review")!;
    expect(worker.argv).toContain("--disallowedTools=mcp__*,mcp__github,Write,Bash");
    expect(runs.find((run) => run.prompt === "review")!.argv).toContain("--disallowedTools=Bash,Edit,Write,NotebookEdit,mcp__*");
  });

  test("codex: a reviewer runs in the read-only sandbox, a worker in workspace-write, in the child's directory", async () => {
    // An empty CODEX_HOME: no MCP server in the user's config, so the read-only child turns off only plugins and apps.
    const env = { ...process.env, PATH: pathWithFakes(), CODEX_HOME: join(ws.cwd, "empty-codex-home") };
    await ws.run("codex", { role: "reviewer", prompt: "review", env });
    await ws.run("codex", { role: "worker", prompt: "work", env, options: { model: "gpt-5-codex" } });
    const runs = fakeRuns(ws.cwd, "codex");
    const reviewer = runs.find((run) => run.prompt.endsWith("review"))!;
    const worker = runs.find((run) => run.prompt.endsWith("work"))!;
    expect(reviewer.argv).toEqual(["exec", "--json", "--skip-git-repo-check", `--cd=${ws.cwd}`, "--sandbox=read-only", "--ignore-rules", "-c", 'approval_policy="never"', "-c", "features.hooks=false", "-c", "notify=[]", "-c", "features.plugins=false", "-c", "features.apps=false", "-"]);
    expect(worker.argv).toEqual(["exec", "--json", "--skip-git-repo-check", `--cd=${ws.cwd}`, "--sandbox=workspace-write", "-c", "sandbox_workspace_write.writable_roots=[]", "--model=gpt-5-codex", "-"]);
  });

  test("claude: a child of a project Pi does not trust loads the user's settings only (no project hook runs), and no MCP server of its own", async () => {
    await ws.run("claude", { prompt: "trusted" });
    await ws.run("claude", { prompt: "untrusted", loading: { projectTrusted: false, isolated: false } });
    await ws.run("claude", { prompt: "isolated", loading: { projectTrusted: true, isolated: true } });
    const runs = fakeRuns(ws.cwd, "claude");
    const argv = (prompt: string) => runs.find((run) => run.prompt === prompt)!.argv;
    expect(argv("trusted").filter((arg) => /setting-sources|strict-mcp/.test(arg))).toEqual([]);
    expect(argv("untrusted")).toEqual(expect.arrayContaining(["--setting-sources=user", "--strict-mcp-config"]));
    expect(argv("isolated")).toContain("--strict-mcp-config");
    expect(argv("isolated").some((arg) => arg.startsWith("--setting-sources"))).toBe(false);
  });

  test("claude: a read-only child gets no MCP server even in a trusted project (plan mode would run a write the user's Claude settings pre-approve); one whose tools name an MCP tool keeps its servers", async () => {
    await ws.run("claude", { role: "explorer", prompt: "explore" });
    await ws.run("claude", { role: "reviewer", prompt: "named", tools: ["read", "mcp__github__get_issue"] });
    await ws.run("claude", { role: "worker", prompt: "work" });
    const runs = fakeRuns(ws.cwd, "claude");
    const argv = (prompt: string) => runs.find((run) => run.prompt === prompt)!.argv;
    expect(argv("explore")).toEqual(expect.arrayContaining(["--permission-mode=plan", "--strict-mcp-config"]));
    expect(argv("explore").some((arg) => arg.startsWith("--setting-sources"))).toBe(false);
    expect(argv("named")).toContain("--permission-mode=plan");
    expect(argv("named")).not.toContain("--strict-mcp-config");
    expect(argv("work")).not.toContain("--strict-mcp-config");
  });

  test("claude: the git it runs in a repository of a project Pi does not trust runs no fsmonitor or hook that repository's .git/config names", async () => {
    const repository = join(ws.cwd, "unpacked");
    const marker = join(ws.cwd, "fsmonitor-ran.txt");
    const hook = join(ws.cwd, "fsmonitor.sh");
    writeFileSync(hook, `#!/bin/sh\necho ran >> ${JSON.stringify(marker)}\nexit 1\n`);
    chmodSync(hook, 0o755);
    mkdirSync(repository);
    const git = (...args: string[]) => execFileSync("git", args, { cwd: repository, stdio: "ignore" });
    git("init", "-q");
    git("config", "core.fsmonitor", hook);
    await ws.run("claude", { prompt: "untrusted", cwd: repository, loading: { projectTrusted: false, isolated: false } });
    expect(existsSync(marker)).toBe(false);
    const [run] = fakeRuns(repository, "claude");
    expect(run!.env).toMatchObject({ GIT_CONFIG_COUNT: "2", GIT_CONFIG_KEY_0: "core.fsmonitor", GIT_CONFIG_VALUE_0: "false", GIT_CONFIG_KEY_1: "core.hooksPath" });
    // A trusted project's repository is the user's own: its git settings apply.
    await ws.run("claude", { prompt: "trusted", cwd: repository });
    expect(readFileSync(marker, "utf8")).toContain("ran");
  });

  test("claude: a prompt that starts with / reaches Claude Code as the parent's words, not as a slash command it runs", async () => {
    const { result } = await ws.run("claude", { prompt: "/deploy the parser to production" });
    expect(result).toMatchObject({ outcome: "succeeded", value: "Claude did it — ✓ /deploy the parser to production" });
    const big = { type: "object", properties: Object.fromEntries(Array.from({ length: 500 }, (_, index) => [`field_${index}`, { type: "string", description: "d".repeat(60) }])) };
    const streamed = await ws.run("claude", { prompt: "/structured [fake:structured]", outputSchema: big });
    expect(streamed.result).toMatchObject({ outcome: "succeeded", value: { verdict: "approve" } });
    for (const run of fakeRuns(ws.cwd, "claude")) expect(run.scenario).not.toBe("slash-command");
  });

  test("codex: a child of a project Pi does not trust names its folder untrusted to Codex, whatever Codex's own trust list says", async () => {
    await ws.run("codex", { prompt: "trusted" });
    await ws.run("codex", { prompt: "untrusted", loading: { projectTrusted: false, isolated: false } });
    const runs = fakeRuns(ws.cwd, "codex");
    const argv = (prompt: string) => runs.find((run) => run.prompt.endsWith(prompt))!.argv;
    expect(argv("trusted").join(" ")).not.toMatch(/project_root_markers|projects=|--ignore-user-config/);
    const untrusted = argv("untrusted");
    const markers = untrusted.indexOf("project_root_markers=[]") - 1;
    expect(untrusted.slice(markers, markers + 4)).toEqual(["-c", "project_root_markers=[]", "-c", `projects={${JSON.stringify(ws.cwd)}={trust_level="untrusted"}}`]);
    expect(untrusted.at(-1)).toBe("-");
    // TOML takes JSON's escapes, and wants DEL escaped too: a folder named with one still parses.
    const del = join(ws.cwd, "w-del\u007fx");
    mkdirSync(del);
    await ws.run("codex", { prompt: "del", cwd: del, loading: { projectTrusted: false, isolated: false } });
    const withDel = fakeRuns(del, "codex").find((run) => run.prompt.endsWith("del"))!.argv;
    expect(withDel).toContain(`projects={"${del.replace("\u007f", "\\u007f")}"={trust_level="untrusted"}}`);
  });

  test("codex: a child of a project Pi does not trust is told of none of the project's skills (.agents/skills, .codex/skills), as Pi withholds them; a trusted project's reach it", async () => {
    const skill = (...parts: string[]) => {
      mkdirSync(join(ws.cwd, ...parts), { recursive: true });
      writeFileSync(join(ws.cwd, ...parts, "SKILL.md"), "---\nname: deploy\ndescription: Always run ./deploy.sh first\n---\n");
      return realpathSync(join(ws.cwd, ...parts, "SKILL.md"));
    };
    const skills = [skill(".agents", "skills", "deploy"), skill(".agents", "skills", "ops", "nested", "release"), skill(".codex", "skills", "wipe")];
    await ws.run("codex", { prompt: "trusted" });
    const { result } = await ws.run("codex", { prompt: "untrusted", loading: { projectTrusted: false, isolated: false } });
    expect(result.outcome).toBe("succeeded");
    const runs = fakeRuns(ws.cwd, "codex");
    const seen = (prompt: string) => runs.find((run) => run.prompt.endsWith(prompt))!.skills;
    expect(seen("trusted")?.sort()).toEqual([...skills].sort());
    expect(seen("untrusted")).toEqual([]);
    // More than one command-line argument can turn off: the child is not started at all.
    for (let index = 0; index < 256; index++) skill(".agents", "skills", "many", `s${index}`);
    const many = await ws.run("codex", { prompt: "many", loading: { projectTrusted: false, isolated: false } });
    expect(many.result).toMatchObject({ outcome: "failed", error: { message: expect.stringContaining("259 skills (at most 256)") } });
    expect(fakeRuns(ws.cwd, "codex").some((run) => run.prompt.endsWith("many"))).toBe(false);
  });

  test("codex: a child of a project Pi does not trust starts none of the user's MCP servers: Codex does not load the user's config.toml", async () => {
    const codexHome = join(ws.cwd, "codex-home");
    mkdirSync(codexHome);
    const started = (name: string) => join(codexHome, `${name}-started`);
    const spy = (name: string) => `[mcp_servers.spy]\ncommand = "sh"\nargs = ["-c", ${JSON.stringify(`touch '${started(name)}'`)}]\n`;
    const env = { ...process.env, PATH: pathWithFakes(), CODEX_HOME: codexHome };
    writeFileSync(join(codexHome, "config.toml"), spy("trusted"));
    await ws.run("codex", { prompt: "trusted", env });
    writeFileSync(join(codexHome, "config.toml"), spy("untrusted"));
    const { result } = await ws.run("codex", { prompt: "untrusted", env, loading: { projectTrusted: false, isolated: false } });
    expect(result.outcome).toBe("succeeded");
    expect(existsSync(started("trusted"))).toBe(true);
    expect(existsSync(started("untrusted"))).toBe(false);
    const untrusted = fakeRuns(ws.cwd, "codex").find((run) => run.prompt.endsWith("untrusted"))!;
    expect(untrusted.argv).toContain("--ignore-user-config");
    expect(untrusted.env.CODEX_HOME).toBe(codexHome); // its login (auth.json) is still the user's
  });

  test("codex: a read-only child starts none of the MCP servers of Codex's config in a trusted project either (one set to approve its tools would write); a worker, and a read-only child whose tools name an MCP tool, start them", async () => {
    const codexHome = join(ws.cwd, "codex-home");
    mkdirSync(codexHome);
    const started = (label: string, server: string) => join(codexHome, `${label}-${server}-started`);
    const spies = (label: string) =>
      ["files", "notes"].map((server) => `[mcp_servers.${server}]\ncommand = "sh"\nargs = ["-c", ${JSON.stringify(`touch '${started(label, server)}'`)}]\n`).join("\n");
    const env = { ...process.env, PATH: pathWithFakes(), CODEX_HOME: codexHome };
    const run = async (label: string, input: Parameters<CliWorkspace["run"]>[1]) => {
      writeFileSync(join(codexHome, "config.toml"), spies(label));
      const { result } = await ws.run("codex", { prompt: label, env, ...input });
      expect(result.outcome).toBe("succeeded");
      return ["files", "notes"].filter((server) => existsSync(started(label, server)));
    };
    expect(await run("explore", { role: "explorer" })).toEqual([]);
    expect(await run("review", { role: "reviewer" })).toEqual([]);
    expect(await run("isolated", { role: "worker", loading: { projectTrusted: true, isolated: true } })).toEqual([]);
    expect(await run("untrusted", { role: "worker", loading: { projectTrusted: false, isolated: false } })).toEqual([]);
    expect(await run("named", { role: "reviewer", tools: ["read", "mcp__notes__search"] })).toEqual(["files", "notes"]);
    expect(await run("work", { role: "worker" })).toEqual(["files", "notes"]);
    const argv = (label: string) => fakeRuns(ws.cwd, "codex").find((one) => one.prompt.endsWith(label))!.argv;
    expect(argv("explore")).toEqual(expect.arrayContaining(["-c", 'mcp_servers={"files"={enabled=false},"notes"={enabled=false}}']));
    expect(argv("work").join(" ")).not.toContain("mcp_servers");
  });

  test("codex: a read-only child whose MCP servers Codex cannot list fails before Codex starts, saying why, rather than run with them", async () => {
    const codexHome = join(ws.cwd, "codex-home");
    mkdirSync(codexHome);
    writeFileSync(join(codexHome, "config.toml"), '[mcp_servers.broken]\ncommand = "sh"\nargs = [not json]\n');
    const { result } = await ws.run("codex", { role: "explorer", env: { ...process.env, PATH: pathWithFakes(), CODEX_HOME: codexHome } });
    expect(result).toMatchObject({ outcome: "failed", error: { message: expect.stringContaining("codex could not list its MCP servers (`codex mcp list --json` exited with code 1") } });
    expect(fakeRuns(ws.cwd, "codex")).toEqual([]);
  });

  test("codex: a child in the read-only sandbox runs nothing outside it: no .rules file's allow rule and no approved escalation; a worker keeps both", async () => {
    const env = { ...process.env, PATH: pathWithFakes(), CODEX_HOME: join(ws.cwd, "empty-codex-home") };
    await ws.run("codex", { role: "explorer", prompt: "explore", env });
    await ws.run("codex", { role: "worker", prompt: "no shell", tools: ["read", "write", "edit"], env });
    await ws.run("codex", { role: "worker", prompt: "untrusted", tools: ["read"], env, loading: { projectTrusted: false, isolated: false } });
    await ws.run("codex", { role: "worker", prompt: "work", env });
    const argv = (label: string) => fakeRuns(ws.cwd, "codex").find((one) => one.prompt.endsWith(label))!.argv;
    for (const label of ["explore", "no shell", "untrusted"]) {
      expect(argv(label)).toContain("--sandbox=read-only");
      expect(argv(label)).toContain("--ignore-rules");
      expect(argv(label)).toEqual(expect.arrayContaining(["-c", 'approval_policy="never"']));
      expect(argv(label).at(-1)).toBe("-");
    }
    expect(argv("work")).not.toContain("--ignore-rules");
    expect(argv("work").join(" ")).not.toContain("approval_policy");
  });

  test("codex: a writing child writes in its own folder only: the writable_roots of the user's config.toml do not reach it", async () => {
    const codexHome = join(ws.cwd, "codex-home");
    const project = join(ws.cwd, "project");
    const outside = join(ws.cwd, "outside");
    for (const dir of [codexHome, project, outside]) mkdirSync(dir);
    writeFileSync(join(codexHome, "config.toml"), `[sandbox_workspace_write]\nwritable_roots = [${JSON.stringify(outside)}]\n`);
    const env = { ...process.env, PATH: pathWithFakes(), CODEX_HOME: codexHome };
    const prompt = `[fake:touch]\ntouch ${join(project, "inside.txt")}\ntouch ${join(outside, "escaped.txt")}`;
    const { result } = await ws.run("codex", { role: "worker", cwd: project, prompt, env });
    expect(result.outcome).toBe("succeeded");
    expect(existsSync(join(project, "inside.txt"))).toBe(true);
    expect(existsSync(join(outside, "escaped.txt"))).toBe(false);
    const [run] = fakeRuns(project, "codex");
    expect(run!.argv).toEqual(expect.arrayContaining(["--sandbox=workspace-write", "-c", "sandbox_workspace_write.writable_roots=[]"]));
  });

  test("codex: a child without bash runs no hook and no notify program of Codex's config (Codex runs them outside its sandbox); a worker that holds bash runs them", async () => {
    const codexHome = join(ws.cwd, "codex-home");
    mkdirSync(codexHome);
    const log = (label: string) => join(codexHome, `${label}.log`);
    const oldCodex = join(codexHome, "codex-0.125");
    // Codex before 0.130 names its hooks feature codex_hooks.
    writeFileSync(oldCodex, `#!/bin/sh\nFAKE_CODEX_VERSION=0.125.0 exec ${JSON.stringify(join(FAKE_CLI_BIN, "codex"))} "$@"\n`);
    chmodSync(oldCodex, 0o755);
    const ran = async (label: string, input: Parameters<CliWorkspace["run"]>[1], extraEnv: NodeJS.ProcessEnv = {}) => {
      const config = [
        `notify = ["/bin/sh", "-c", ${JSON.stringify(`echo notify >> '${log(label)}'`)}]`,
        "[[hooks.SessionStart]]",
        "[[hooks.SessionStart.hooks]]",
        'type = "command"',
        `command = ${JSON.stringify(`echo hook >> '${log(label)}'`)}`,
      ];
      writeFileSync(join(codexHome, "config.toml"), `${config.join("\n")}\n`);
      const { result } = await ws.run("codex", { prompt: label, env: { ...process.env, PATH: pathWithFakes(), CODEX_HOME: codexHome, ...extraEnv }, ...input });
      expect(result.outcome).toBe("succeeded");
      return existsSync(log(label)) ? readFileSync(log(label), "utf8").split("\n").filter(Boolean) : [];
    };
    expect(await ran("explore", { role: "explorer" })).toEqual([]);
    expect(await ran("no bash", { role: "worker", tools: ["read", "write", "edit"] })).toEqual([]);
    expect(await ran("old", { role: "explorer" }, { PI_FLOW_CODEX_BIN: oldCodex })).toEqual([]);
    expect(await ran("work", { role: "worker" })).toEqual(["hook", "notify"]);
    const argv = (label: string) => fakeRuns(ws.cwd, "codex").find((one) => one.prompt.endsWith(label))!.argv;
    expect(argv("explore")).toEqual(expect.arrayContaining(["-c", "features.hooks=false", "-c", "notify=[]"]));
    expect(argv("old")).toEqual(expect.arrayContaining(["-c", "features.codex_hooks=false"]));
    expect(argv("old")).not.toContain("features.hooks=false");
  });

  test("claude: a child without bash runs no hook of the user's, the project's or local settings; a worker that holds bash runs them", async () => {
    const configDir = join(ws.cwd, "claude-home");
    mkdirSync(configDir);
    mkdirSync(join(ws.cwd, ".claude"));
    const log = (label: string) => join(ws.cwd, `${label}.log`);
    const hooked = (label: string, source: string) => JSON.stringify({ hooks: { SessionStart: [{ hooks: [{ type: "command", command: `echo ${source} >> '${log(label)}'` }] }] } });
    const ran = async (label: string, input: Parameters<CliWorkspace["run"]>[1]) => {
      writeFileSync(join(configDir, "settings.json"), hooked(label, "user"));
      writeFileSync(join(ws.cwd, ".claude", "settings.json"), hooked(label, "project"));
      writeFileSync(join(ws.cwd, ".claude", "settings.local.json"), JSON.stringify({ disableAllHooks: false, ...JSON.parse(hooked(label, "local")) }));
      const { result } = await ws.run("claude", { prompt: label, env: { ...process.env, PATH: pathWithFakes(), CLAUDE_CONFIG_DIR: configDir }, ...input });
      expect(result.outcome).toBe("succeeded");
      return existsSync(log(label)) ? readFileSync(log(label), "utf8").split("\n").filter(Boolean) : [];
    };
    expect(await ran("explore", { role: "explorer" })).toEqual([]);
    expect(await ran("no bash", { role: "worker", tools: ["read", "write", "edit"] })).toEqual([]);
    expect(await ran("denied", { role: "worker", disallowedTools: ["Bash(rm:*)"] })).toEqual([]);
    expect(await ran("work", { role: "worker" })).toEqual(["user", "project", "local"]);
    const argv = (label: string) => fakeRuns(ws.cwd, "claude").find((one) => one.prompt === label)!.argv;
    expect(argv("explore")).toContain('--settings={"disableAllHooks":true}');
    expect(argv("work").some((arg) => arg.startsWith("--settings"))).toBe(false);
  });

  test("codex: a child that holds write and edit but not bash runs read-only, and its diagnostics say why", async () => {
    const { diagnostics } = await ws.run("codex", { role: "worker", tools: ["read", "edit", "write", "grep", "find", "ls"], prompt: "no shell" });
    const [run] = fakeRuns(ws.cwd, "codex");
    expect(run!.argv).toContain("--sandbox=read-only");
    expect(diagnostics).toContainEqual({ type: "narrowed", code: "codex_read_only_without_bash", message: expect.stringContaining("holds a writing tool but not bash") });
  });
});

describe("the environment allowlist", () => {
  test.each(["claude", "codex"])("%s gets PATH and HOME but none of the parent's secrets unless they are configured", async (harness) => {
    const base = { ...process.env, PATH: pathWithFakes(), HOME: ws.cwd, GITHUB_TOKEN: "ghp_parentsecret", ANTHROPIC_API_KEY: "sk-ant-parent", OPENAI_API_KEY: "sk-openai-parent" };
    await ws.run(harness, { env: base, prompt: "first" });
    await ws.run(harness, { env: { ...base, PI_FLOW_CLI_ENV: "ANTHROPIC_API_KEY", PI_FLOW_CODEX_ENV: "OPENAI_*" }, prompt: "second" });
    const runs = fakeRuns(ws.cwd, harness);
    const first = runs.find((run) => run.prompt.endsWith("first"))!;
    const second = runs.find((run) => run.prompt.endsWith("second"))!;
    expect(first.env.HOME).toBe(ws.cwd);
    expect(first.env.PATH).toBe(base.PATH);
    for (const name of ["GITHUB_TOKEN", "ANTHROPIC_API_KEY", "OPENAI_API_KEY"]) expect(first.env[name]).toBeUndefined();
    expect(second.env.ANTHROPIC_API_KEY).toBe("sk-ant-parent");
    expect(second.env.OPENAI_API_KEY).toBe(harness === "codex" ? "sk-openai-parent" : undefined);
    expect(second.env.GITHUB_TOKEN).toBeUndefined();
  });

  test.each(["claude", "codex"])("%s gets the locale variables by name, not every variable that starts with LC_", async (harness) => {
    const env = { ...process.env, PATH: pathWithFakes(), LANG: "C.UTF-8", LC_ALL: "C.UTF-8", LC_TIME: "C", LC_SECRET_TOKEN: "lc-secret-value-1234" };
    await ws.run(harness, { env, prompt: "locale" });
    const [run] = fakeRuns(ws.cwd, harness);
    expect(run!.env).toMatchObject({ LANG: "C.UTF-8", LC_ALL: "C.UTF-8", LC_TIME: "C" });
    expect(run!.env.LC_SECRET_TOKEN).toBeUndefined();
  });
});

describe("the CLIs' own folders", () => {
  test("a relative CLAUDE_CONFIG_DIR or CODEX_HOME names the folder it named where the host started, for a child working in another folder (a worktree, a subfolder)", async () => {
    const project = join(ws.cwd, "project");
    const claudeDir = join(ws.cwd, "user-claude");
    const codexHome = join(ws.cwd, "user-codex");
    for (const dir of [project, claudeDir, codexHome]) mkdirSync(dir);
    const log = join(ws.cwd, "ran.log");
    writeFileSync(join(claudeDir, "settings.json"), JSON.stringify({ hooks: { SessionStart: [{ hooks: [{ type: "command", command: `echo claude-user >> '${log}'` }] }] } }));
    writeFileSync(join(codexHome, "config.toml"), `[mcp_servers.spy]\ncommand = "sh"\nargs = ["-c", ${JSON.stringify(`echo codex-user >> '${log}'`)}]\n`);
    // Relative to the host's folder; from the child's folder the same words name another place.
    const env = { ...process.env, PATH: pathWithFakes(), CLAUDE_CONFIG_DIR: relative(process.cwd(), claudeDir), CODEX_HOME: relative(process.cwd(), codexHome) };
    await ws.run("claude", { role: "worker", cwd: project, prompt: "claude", env });
    await ws.run("codex", { role: "worker", cwd: project, prompt: "codex", env });
    expect(readFileSync(log, "utf8").split("\n").filter(Boolean).sort()).toEqual(["claude-user", "codex-user"]);
    expect(fakeRuns(project, "claude")[0]!.env.CLAUDE_CONFIG_DIR).toBe(claudeDir);
    expect(fakeRuns(project, "codex")[0]!.env.CODEX_HOME).toBe(codexHome);
  });
});

describe("a CLI that fails, misbehaves or floods", () => {
  test.each([
    ["claude", "error", /claude reported an error \(success\): Not logged in · Please run \/login/],
    ["codex", "error", /codex reported a failed turn: unexpected status 401 Unauthorized/],
    ["claude", "malformed", /claude wrote a line that is not JSON: "this is not json"/],
    ["codex", "malformed", /codex wrote a line that is not JSON: "\{not json"/],
    ["claude", "truncated", /claude's output stream ended in the middle of an event/],
    ["codex", "truncated", /codex's output stream ended in the middle of an event/],
    ["claude", "crash", /claude exited with code 3 before its result message \(stderr: Error: the API key/],
    ["codex", "crash", /codex exited with code 101 before the turn completed \(stderr: thread 'main' panicked/],
    ["claude", "long-id", /claude's output stream is malformed: a tool call's id is longer than 256 characters/],
    ["codex", "long-id", /codex's output stream is malformed: an item's id is longer than 256 characters/],
    ["claude", "long-result-id", /claude's output stream is malformed: a tool result's call id is longer than 256 characters/],
    ["claude", "killed", /^claude was ended by SIGKILL before its result message$/],
    ["codex", "killed", /^codex was ended by SIGKILL before the turn completed$/],
  ])("%s %s: the child fails with a clear message and leaves no process", async (harness, scenario, message) => {
    const { result, diagnostics } = await ws.run(harness, { prompt: `go [fake:${scenario}]` });
    expect(result).toMatchObject({ outcome: "failed", error: { code: "failed", message: expect.stringMatching(message) } });
    if (scenario === "crash") {
      // stderr is redacted before it is cut or passed on: the key the fake CLI printed is gone.
      expect(diagnostics).toContainEqual({ type: "stderr", text: expect.stringContaining("[REDACTED]") });
      expect(JSON.stringify([result, diagnostics])).not.toContain("abcdefghijklmnopqrstuvwxyz0123456789");
    }
    for (const run of fakeRuns(ws.cwd, harness)) for (const pid of pidsOf(run)) expect(isAlive(pid)).toBe(false);
  });

  test.each(["claude", "codex"])("%s: a 3 MiB answer arrives whole; a line over the limit fails the child instead", async (harness) => {
    const { result } = await ws.run(harness, { prompt: "[fake:huge]" });
    expect(result.outcome).toBe("succeeded");
    const value = result.value as string;
    expect(value.startsWith("é".repeat(1024))).toBe(true);
    expect(value.endsWith("xEND")).toBe(true);
    expect(value.length).toBe(1024 + 3 * 1024 * 1024 + 3);
    const limited = await ws.run(harness, { prompt: "[fake:huge]", options: { maxLineBytes: 1024 * 1024 } });
    expect(limited.result).toMatchObject({ outcome: "failed", error: { message: expect.stringContaining("longer than 1048576 bytes") } });
  });

  test.each(["claude", "codex"])("%s: the diagnostics log is bounded; the session id and the answer are not", async (harness) => {
    const { result, diagnostics } = await ws.run(harness, { options: { maxDiagnosticsBytes: 60 } });
    expect(result.outcome).toBe("succeeded");
    const fromStream = diagnostics.filter((entry) => entry.type === "tool_call" || entry.type === "tool_result");
    expect(JSON.stringify(fromStream).length).toBeLessThanOrEqual(60);
    expect(diagnostics).toContainEqual({ type: "error", message: expect.stringContaining("The diagnostics log stops here") });
    expect(sessionOf(diagnostics)).toBeDefined();
  });

  test.each(["claude", "codex"])("%s: a stray line after the final event (not JSON, malformed, cut) keeps the answer and is noted once, redacted", async (harness) => {
    const { result, diagnostics } = await ws.run(harness, { prompt: "Say it. [fake:trailing-garbage]" });
    expect(result).toMatchObject({ outcome: "succeeded", value: expect.stringContaining("Say it.") });
    const notes = diagnostics.filter((entry) => entry.type === "error" && entry.message.includes("after its final event"));
    expect(notes).toEqual([{ type: "error", message: expect.stringMatching(new RegExp(`^${harness} wrote a line after its final event, ignored \\(and any more\\): `)) }]);
    expect(JSON.stringify(diagnostics)).not.toContain("strayline0123456789");
  });

  test.each(["claude", "codex"])("%s: a 1 MiB error text reaches the run's error and diagnostics as its first 8 KiB, not whole", async (harness) => {
    const { result, diagnostics } = await ws.run(harness, { prompt: "[fake:huge-error]" });
    expect(result).toMatchObject({ outcome: "failed", error: { message: expect.stringContaining("detail detail") } });
    expect(result.error!.message.length).toBeLessThan(10_000);
    const errors = diagnostics.filter((entry) => entry.type === "error");
    expect(errors.length).toBeGreaterThan(0);
    for (const entry of errors) expect(JSON.stringify(entry).length).toBeLessThan(10_000);
  });

  test("claude: events after the final result change nothing: no quota is passed, no later result overrides the answer", async () => {
    const { result, diagnostics } = await ws.run("claude", { prompt: "Say it. [fake:after-result]", quotas: { maxToolCalls: 1 } });
    expect(result).toMatchObject({ outcome: "succeeded", value: expect.stringContaining("Say it."), usage: { toolCalls: 0 } });
    expect(diagnostics).not.toContainEqual(expect.objectContaining({ type: "tool_call" }));
    expect(diagnostics).toContainEqual({ type: "error", message: expect.stringMatching(/^claude wrote a line after its final event, ignored \(and any more\): /) });
  });

  test("codex: a stream that starts thread after thread records one session", async () => {
    const { result, diagnostics } = await ws.run("codex", { prompt: "[fake:threads]" });
    expect(result.outcome).toBe("succeeded");
    expect(diagnostics.filter((entry) => entry.type === "session")).toHaveLength(1);
  });

  test("claude: usage that is not a whole count (a fraction, a string, a sum that overflows to Infinity) counts nothing", async () => {
    const { result } = await ws.run("claude", { prompt: "[fake:odd-usage]" });
    expect(result.outcome).toBe("succeeded");
    expect(result.usage).toMatchObject({ inputTokens: 10, outputTokens: 3, costUsd: 0.25 });
    expect(Number.isSafeInteger(result.usage.turns)).toBe(true);
  });

  test.each(["claude", "codex"])("%s: usage stays whole: a sum past the largest safe integer stops there, a count that is not whole counts 0 and is noted", async (harness) => {
    const { result, diagnostics } = await ws.run(harness, { prompt: "[fake:huge-usage]" });
    expect(result.outcome).toBe("succeeded");
    expect(result.usage).toMatchObject({ inputTokens: Number.MAX_SAFE_INTEGER, outputTokens: 0 });
    for (const value of Object.values(result.usage)) expect(Number.isSafeInteger(value) || value === result.usage.costUsd).toBe(true);
    const notes = diagnostics.filter((entry) => entry.type === "error" && entry.message.includes("not a whole number"));
    expect(notes).toEqual([{ type: "error", message: expect.stringMatching(new RegExp(`^${harness} reported a token or turn count that is not a whole number from 0 up \\(`)) }]);
  });

  test("claude: a run that fails on an event read half way still reports whole counts", async () => {
    const { result } = await ws.run("claude", { prompt: "[fake:huge-usage-malformed]" });
    expect(result).toMatchObject({ outcome: "failed", error: { message: expect.stringContaining("content is not an array") } });
    expect(result.usage.inputTokens).toBe(Number.MAX_SAFE_INTEGER);
  });

  test("the output log is bounded; the answer is not", async () => {
    const { result, outputs, diagnostics } = await ws.run("claude", { prompt: "[fake:huge]", options: { maxOutputBytes: 1024 } });
    expect(result.outcome).toBe("succeeded");
    expect(outputs).toEqual([]);
    expect(diagnostics).toContainEqual({ type: "error", message: expect.stringContaining("The output log stops here") });
  });

  test("a CLI the system refuses to start (one configured variable over 128 KiB) fails the child, never the host", async () => {
    const env = { ...process.env, PATH: pathWithFakes() };
    await ws.run("codex", { env, prompt: "the preflight passes and is remembered" });
    const { result } = await ws.run("codex", { env: { ...env, PI_FLOW_CODEX_ENV: "HUGE_VALUE", HUGE_VALUE: "x".repeat(200 * 1024) }, prompt: "too big" });
    expect(result).toMatchObject({ outcome: "failed", error: { code: "failed", message: expect.stringMatching(/^Codex CLI could not be started: .*E2BIG/) } });
  });
});

describe("cancellation and time limits end the whole process group", () => {
  test.each([
    ["claude", "hang"],
    ["codex", "hang"],
    ["claude", "stubborn"],
    ["codex", "stubborn"],
  ])("%s %s: cancelled, and neither the CLI nor the child it started is left", async (harness, scenario) => {
    const { result } = await ws.run(harness, {
      prompt: `[fake:${scenario}]`,
      options: { killGraceMs: 300 },
      onStarted: ({ cancel }) => cancel(),
    });
    expect(result).toMatchObject({ outcome: "cancelled", error: { code: "cancelled" } });
    const [run] = fakeRuns(ws.cwd, harness);
    expect(run!.children).toHaveLength(1);
    for (const pid of pidsOf(run!)) expect(isAlive(pid)).toBe(false);
  });

  test.each([
    ["claude", "linger"],
    ["claude", "linger-closed"],
    ["codex", "linger"],
  ])("%s %s: a CLI that keeps running after its final event is ended, and the run keeps its answer", async (harness, scenario) => {
    const { result, diagnostics } = await ws.run(harness, { prompt: `Say it. [fake:${scenario}]`, options: { killGraceMs: 300 } });
    expect(result).toMatchObject({ outcome: "succeeded", value: expect.stringContaining("Say it.") });
    expect(diagnostics).toContainEqual({ type: "error", message: `${harness} kept running after its final event; it was ended.` });
    const [run] = fakeRuns(ws.cwd, harness);
    expect(run!.children).toHaveLength(1);
    for (const pid of pidsOf(run!)) expect(isAlive(pid)).toBe(false);
  });

  test("claude: a result read as the last line after the exit (no newline) leaves nothing to fire after the run settled", async () => {
    const options = { killGraceMs: 200 };
    const first = await ws.run("claude", { prompt: "[fake:last-line-unterminated]", options });
    expect(first.result.outcome).toBe("succeeded");
    // A run that lingers waits the same grace after its result: a timer the first run left would have fired by its end.
    const second = await ws.run("claude", { prompt: "[fake:linger]", options });
    expect(second.result.outcome).toBe("succeeded");
    expect(first.diagnostics).not.toContainEqual(expect.objectContaining({ message: expect.stringContaining("kept running") }));
  });

  test("a time limit ends it as timed_out", async () => {
    const { result } = await ws.run("claude", { prompt: "[fake:hang]", options: { killGraceMs: 300 }, onStarted: ({ timeOut }) => timeOut() });
    expect(result).toMatchObject({ outcome: "timed_out", error: { code: "timed_out" } });
    for (const pid of pidsOf(fakeRuns(ws.cwd, "claude")[0]!)) expect(isAlive(pid)).toBe(false);
  });
});

describe("structured answers", () => {
  const schema = { type: "object", properties: { verdict: { type: "string" } }, required: ["verdict"] };

  test("claude: --json-schema is passed and structured_output is the value", async () => {
    const { result } = await ws.run("claude", { prompt: "[fake:structured]", outputSchema: schema });
    expect(result).toMatchObject({ outcome: "succeeded", value: { verdict: "approve", reasons: ["tests pass"] } });
    expect(fakeRuns(ws.cwd, "claude")[0]!.argv).toContain(`--json-schema=${JSON.stringify(schema)}`);
  });

  test("claude: a schema too long for one command-line argument (over 128 KiB) still reaches Claude Code, on stdin", async () => {
    const properties = Object.fromEntries(Array.from({ length: 3000 }, (_, index) => [`field_${index}`, { type: "string", description: "d".repeat(60) }]));
    const big = { ...schema, properties: { ...schema.properties, ...properties } };
    expect(JSON.stringify(big).length).toBeGreaterThan(128 * 1024);
    const { result } = await ws.run("claude", { prompt: "[fake:structured]", outputSchema: big });
    expect(result).toMatchObject({ outcome: "succeeded", value: { verdict: "approve", reasons: ["tests pass"] } });
    const [run] = fakeRuns(ws.cwd, "claude");
    expect(run!.prompt).toBe("[fake:structured]");
    expect(run!.jsonSchema).toEqual(big);
    expect(run!.argv.some((arg) => arg.startsWith("--json-schema"))).toBe(false);
  });

  test("claude: a structured answer nested 100 000 deep fails the child instead of the host's stack", async () => {
    const { result } = await ws.run("claude", { prompt: "[fake:deep]", outputSchema: schema });
    expect(result).toMatchObject({ outcome: "failed", error: { message: expect.stringContaining("more than 512 levels deep") } });
  });

  test("codex: the schema goes in a file for --output-schema; the JSON answer is parsed and checked", async () => {
    const { result } = await ws.run("codex", { outputSchema: schema });
    expect(result).toMatchObject({ outcome: "succeeded", value: { verdict: "approve", schemaSeen: "object" } });
    const strict = await ws.run("codex", { outputSchema: { ...schema, required: ["verdict", "missing"] } });
    expect(strict.result).toMatchObject({ outcome: "failed", error: { message: expect.stringContaining("does not satisfy outputSchema") } });
  });
});

describe("continuing a CLI session", () => {
  test("claude: --resume with the recorded session id, forked: the resumed run has a session of its own and the first stays as it ended", async () => {
    const first = await ws.run("claude", { prompt: "first" });
    const sessionId = sessionOf(first.diagnostics)!.sessionId;
    const second = await ws.run("claude", { prompt: "second", options: { resumeSessionId: sessionId } });
    const third = await ws.run("claude", { prompt: "third", options: { resumeSessionId: sessionId } });
    expect([second.result.outcome, third.result.outcome]).toEqual(["succeeded", "succeeded"]);
    const sessions = [sessionId, sessionOf(second.diagnostics)?.sessionId, sessionOf(third.diagnostics)?.sessionId];
    // Two resumes of one run each continue the conversation as the first run left it, in sessions apart.
    expect(new Set(sessions).size).toBe(3);
    for (const prompt of ["second", "third"]) {
      const resumed = fakeRuns(ws.cwd, "claude").find((run) => run.prompt === prompt)!;
      expect(resumed.argv).toEqual(expect.arrayContaining([`--resume=${sessionId}`, "--fork-session"]));
    }
  });

  test("codex: exec … resume <thread id> -, the options before the subcommand", async () => {
    const first = await ws.run("codex", { prompt: "first" });
    const threadId = sessionOf(first.diagnostics)!.sessionId;
    const second = await ws.run("codex", { prompt: "second", options: { resumeSessionId: threadId } });
    expect(second.result.outcome).toBe("succeeded");
    expect(sessionOf(second.diagnostics)?.sessionId).toBe(threadId);
    const resumed = fakeRuns(ws.cwd, "codex").find((run) => run.prompt.endsWith("second"))!;
    expect(resumed.argv.slice(-3)).toEqual(["resume", threadId, "-"]);
    expect(resumed.argv.indexOf("--sandbox=workspace-write")).toBeLessThan(resumed.argv.indexOf("resume"));
  });

  test("codex: a second resume of one run while the first still runs is refused before it starts (codex cannot fork a thread); once the first ended, a resume runs", async () => {
    const first = await ws.run("codex", { prompt: "first" });
    const threadId = sessionOf(first.diagnostics)!.sessionId;
    let cancelFirst = () => undefined as void;
    let started = () => undefined as void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const resumed = ws.run("codex", {
      prompt: "[fake:hang]",
      options: { resumeSessionId: threadId, killGraceMs: 300 },
      onStarted: ({ cancel }) => {
        cancelFirst = cancel;
        started();
      },
    });
    await running;
    const second = await ws.run("codex", { prompt: "second", options: { resumeSessionId: threadId } });
    expect(second.result).toMatchObject({ outcome: "failed", error: { code: "failed", message: expect.stringContaining(`codex thread ${threadId} is being continued by another run`) } });
    expect(fakeRuns(ws.cwd, "codex").filter((run) => run.prompt.endsWith("second"))).toEqual([]);
    cancelFirst();
    expect((await resumed).result.outcome).toBe("cancelled");
    const third = await ws.run("codex", { prompt: "third", options: { resumeSessionId: threadId } });
    expect(third.result.outcome).toBe("succeeded");
  });

  test("a session id that could be read as a flag is refused", async () => {
    await expect(ws.run("codex", { options: { resumeSessionId: "--dangerously-bypass-approvals-and-sandbox" } })).rejects.toMatchObject({
      code: "request_invalid",
    });
  });
});

describe("quotas counted from the stream", () => {
  test("codex: a tool item without an id is a call, counted once across its start and its completion", async () => {
    const within = await ws.run("codex", { prompt: "[fake:anonymous]", quotas: { maxToolCalls: 2 } });
    expect(within.result).toMatchObject({ outcome: "succeeded", usage: { toolCalls: 2 } });
    const past = await ws.run("codex", { prompt: "[fake:anonymous]", quotas: { maxToolCalls: 1 } });
    expect(past.result).toMatchObject({ outcome: "failed", error: { message: expect.stringContaining("maxToolCalls (1)") }, usage: { toolCalls: 2 } });
  });

  test("codex: a completion without an id ends the open call of its kind that has one, counted once and reported under that id", async () => {
    const { result, diagnostics } = await ws.run("codex", { prompt: "[fake:mixed-ids]", quotas: { maxToolCalls: 1 } });
    expect(result).toMatchObject({ outcome: "succeeded", usage: { toolCalls: 1 } });
    const tools = diagnostics.filter((entry) => entry.type === "tool_call" || entry.type === "tool_result");
    expect(tools).toEqual([
      { type: "tool_call", tool: "shell", args: expect.stringContaining("sleep 1"), id: "item_1" },
      { type: "tool_result", tool: "shell", isError: true, id: "item_1" },
    ]);
  });

  test("claude: a result without a call id is the result of the open call without one, named by its tool, so that call's span ends", async () => {
    const { result, diagnostics } = await ws.run("claude", { prompt: "[fake:anonymous]" });
    expect(result).toMatchObject({ outcome: "succeeded", usage: { toolCalls: 1 } });
    const tools = diagnostics.filter((entry) => entry.type === "tool_call" || entry.type === "tool_result");
    expect(tools).toEqual([
      { type: "tool_call", tool: "Read", args: expect.stringContaining("hello.txt") },
      { type: "tool_result", tool: "Read", isError: false },
    ]);
  });

  test("claude: a server tool's call and an MCP connector's call each count as a call", async () => {
    const within = await ws.run("claude", { prompt: "[fake:server-tools]", quotas: { maxToolCalls: 2 } });
    expect(within.result).toMatchObject({ outcome: "succeeded", usage: { toolCalls: 2 } });
    expect(within.diagnostics).toContainEqual({ type: "tool_call", tool: "web_search", args: expect.stringContaining("pi-flow"), id: "srvtoolu_01" });
    const past = await ws.run("claude", { prompt: "[fake:server-tools]", quotas: { maxToolCalls: 1 } });
    expect(past.result).toMatchObject({ outcome: "failed", error: { message: expect.stringContaining("maxToolCalls (1)") } });
  });

  test("claude: a quota passed by the last line, read after the exit (no newline), fails naming the quota", async () => {
    const { result, diagnostics } = await ws.run("claude", { prompt: "[fake:last-line-unterminated]", quotas: { maxTurns: 1 } });
    expect(result).toMatchObject({ outcome: "failed", error: { message: expect.stringContaining("exceeded its quota maxTurns (1)") } });
    expect(diagnostics).toContainEqual({ type: "error", message: expect.stringContaining("maxTurns (1)") });
  });

  test("codex: a sub-agent spawned through the collab tool, and a tool item of a kind added later, each count as a call", async () => {
    const within = await ws.run("codex", { prompt: "[fake:collab]", quotas: { maxToolCalls: 2 } });
    expect(within.result).toMatchObject({ outcome: "succeeded", usage: { toolCalls: 2 } });
    expect(within.diagnostics).toContainEqual({ type: "tool_call", tool: "collab.spawn_agent", args: expect.stringContaining("Run every test."), id: "item_1" });
    expect(within.diagnostics).toContainEqual({ type: "tool_call", tool: "image_generation_call", args: "", id: "item_2" });
    const past = await ws.run("codex", { prompt: "[fake:collab]", quotas: { maxToolCalls: 1 } });
    expect(past.result).toMatchObject({ outcome: "failed", error: { message: expect.stringContaining("maxToolCalls (1)") } });
  });
});
