// Writers side by side: children in their own git worktrees, their changes kept and applied only
// on request. Real git, a real Pi session, the faux model.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { fauxAssistantMessage, fauxText, fauxToolCall, type FauxResponseStep } from "@earendil-works/pi-ai";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startPiSession, type PiTestSession } from "../support/pi-session.ts";
import { callForReceipt } from "../support/receipts.ts";
import { childHangs } from "../support/children.ts";
import { flowInProcess } from "../cli/in-process.ts";
import { recordingUi } from "../support/recording-ui.ts";
import { theme } from "../ui/views.ts";
import { gitIn, makeRepo, worktreeCount, writeIn } from "../support/git-repo.ts";

/** A token the redaction knows, written by a child as `SECRET` in its task asks: three lines of it. */
const SECRET = "ghp_" + "Zq8Lw3Nv5Tb1Xc7Rm2Hk9Pd4Fs6Gj0Ya1Ue5";
const SECRET_FILE = `token one = ${SECRET}\ntoken two = ${SECRET}\ntoken three = ${SECRET}\n`;
const UNKNOWN_RUN = "ag_000000000_0000000000"; // well formed, never made

/** What each child read of the parent's uncommitted and untracked files, by its tag. */
const seen = new Map<string, string>();

const textOf = (content: unknown): string =>
  typeof content === "string" ? content : (content as { type: string; text?: string }[]).map((part) => part.text ?? "").join("");

/**
 * A writing child: its task says `WRITE <tag> <path> <content> <up>`. Its first request reads the
 * parent's untracked and uncommitted files (relative to its cwd: `<up>` leads to the top) and
 * writes the file; its second records what it read and finishes.
 */
const writer: FauxResponseStep = (context) => {
  const task = context.messages.map((m) => (m.role === "user" ? textOf(m.content) : "")).join("\n");
  const [, tag, path, asked, up] = /WRITE (\S+) (\S+) (\S+) (\S*)/.exec(task) ?? [];
  const content = asked === "SECRET" ? SECRET_FILE.trimEnd() : asked;
  const top = up === "-" ? "" : up!;
  const results = context.messages.filter((m) => m.role === "toolResult");
  if (results.length === 0) {
    return fauxAssistantMessage(
      [fauxToolCall("read", { path: `${top}notes.txt` }), fauxToolCall("read", { path: `${top}shared.txt` }), fauxToolCall("write", { path: path!, content: `${content}\n` })],
      { stopReason: "toolUse" },
    );
  }
  seen.set(tag!, results.filter((m) => m.role === "toolResult" && m.toolName === "read").map((m) => textOf(m.content)).join(""));
  return fauxAssistantMessage([fauxText(`wrote ${path}`)]);
};

let pi: PiTestSession;
const ui = recordingUi(theme);
let root: string;
const runIds: string[] = [];
const changes: unknown[] = [];
/** The workflow's third writer: it wrote a secret, and its changes are kept, not applied. */
let secretRun = "";
/** A finished writer whose changes are kept, applied only by the /flow apply test. */
let sixId = "";

type RunsAnswer = { ok: boolean; data: { results?: { runId: string; status: string; files?: string[] }[]; page?: { text: string; nextCursor?: string } }; error?: { code: string; message: string } };
const runs = async (args: Record<string, unknown>, session: PiTestSession = pi) => (await session.callTool("external_runs", args)).structuredContent as RunsAnswer;
const refs = () => gitIn(root, "for-each-ref", "--format=%(refname)", "refs/pi-flow").split("\n");
/** What `/flow <command>` printed last. */
const printed = () => {
  const entries = pi.session.sessionManager.getEntries().filter((entry) => entry.type === "custom" && entry.customType === "pi-flow-output");
  return (entries.at(-1) as unknown as { data: { lines: string[] } }).data.lines;
};

beforeAll(async () => {
  root = makeRepo({ ".gitignore": ".agent/\n.flow-home/\n", "shared.txt": "committed\n", "sub/keep.txt": "keep\n" });
  writeIn(root, { "shared.txt": "uncommitted edit\n", "notes.txt": "untracked notes\n" });
  pi = await startPiSession({ cwd: root, ui: ui.context, mode: "tui", env: { PI_FLOW_MAX_BACKGROUND: "1" } });
  const children = [
    ["one", "a.txt", "alpha"],
    ["two", "b.txt", "bravo"],
    ["three", "c.txt", "charlie"],
    ["four", "d.txt", "delta-from-four"],
    ["five", "d.txt", "delta-from-five"],
  ];
  const calls = children.map(([tag, path, content]) => ({
    name: "external_delegate",
    args: {
      role: "worker",
      description: `write ${tag}`,
      prompt: `WRITE ${tag} ${path} ${content} ${tag === "three" ? "../" : "-"}`,
      context: { mode: "none" },
      isolation: "worktree",
      ...(tag === "three" ? { cwd: "sub" } : {}),
    },
  }));
  const outcomes = await pi.callToolsAtOnce(calls, { children: Array.from({ length: 10 }, () => writer) });
  for (const outcome of outcomes) {
    const receipt = outcome.structuredContent as { ok: boolean; data: { run: { runId: string; changes?: unknown } } };
    expect(receipt.ok, outcome.text).toBe(true);
    runIds.push(receipt.data.run.runId);
    changes.push(receipt.data.run.changes);
  }
}, 120_000);
afterAll(() => pi?.dispose());

describe('isolation "worktree" on external_delegate', () => {
  test("five writers ran in parallel, each in its own worktree seeing the parent's uncommitted and untracked files; nothing reached the parent's tree", () => {
    expect(changes).toEqual(Array.from({ length: 5 }, () => ({ files: 1, insertions: 1, deletions: 0 })));
    for (const tag of ["one", "two", "three", "four", "five"]) expect(seen.get(tag)).toBe("untracked notes\nuncommitted edit\n");
    for (const file of ["a.txt", "b.txt", "c.txt", "d.txt", "sub/c.txt"]) expect(existsSync(join(root, file))).toBe(false);
    // Each run kept exactly its own file: the subdirectory cwd mapped to the same one in its worktree.
    const kept = runIds.map((runId) => gitIn(root, "diff", "--name-only", `refs/pi-flow/${runId}^`, `refs/pi-flow/${runId}`));
    expect(kept).toEqual(["a.txt", "b.txt", "sub/c.txt", "d.txt", "d.txt"]);
    expect(worktreeCount(root)).toBe(1); // every worktree removed once its child settled
    expect(readdirSync(join(pi.flowHome, "worktrees")).flatMap((project) => readdirSync(join(pi.flowHome, "worktrees", project)))).toEqual([]);
  });

  test("the patch view shows a run's changes, paged like every view", async () => {
    const answer = await runs({ action: "inspect", runIds: [runIds[0]], view: "patch" });
    expect(answer.data.page!.text).toContain("+++ b/a.txt\n@@ -0,0 +1 @@\n+alpha");
  });

  test("apply lands the first four exactly; the fifth conflicts on d.txt and changes nothing; the user's edits survive, nothing staged", async () => {
    const applied = await runs({ action: "apply", runIds: runIds.slice(0, 4) });
    expect(applied.data.results).toEqual([
      { runId: runIds[0], status: "applied", files: ["a.txt"] },
      { runId: runIds[1], status: "applied", files: ["b.txt"] },
      { runId: runIds[2], status: "applied", files: ["sub/c.txt"] },
      { runId: runIds[3], status: "applied", files: ["d.txt"] },
    ]);
    const conflict = await runs({ action: "apply", runIds: [runIds[4]] });
    expect(conflict.data.results).toEqual([{ runId: runIds[4], status: "conflict", files: ["d.txt"] }]);
    expect(readFileSync(join(root, "d.txt"), "utf8")).toBe("delta-from-four\n");
    expect(readFileSync(join(root, "sub/c.txt"), "utf8")).toBe("charlie\n");
    expect(readFileSync(join(root, "shared.txt"), "utf8")).toBe("uncommitted edit\n");
    expect(readFileSync(join(root, "notes.txt"), "utf8")).toBe("untracked notes\n");
    expect(gitIn(root, "diff", "--cached", "--name-only")).toBe("");

    const again = await runs({ action: "apply", runIds: [runIds[0]] });
    expect(again.data.results).toEqual([{ runId: runIds[0], status: "already_applied" }]);
    expect(gitIn(root, "for-each-ref", "refs/pi-flow")).not.toContain(runIds[0]!);
  });

  test("flow runs apply reports the conflict on the command line (exit 1); flow runs discard drops the changes; apply then has nothing to apply", async () => {
    const env = { ...process.env, PI_FLOW_HOME: pi.flowHome };
    const conflict = await flowInProcess(["runs", "apply", runIds[4]!, "--cwd", root], { env });
    expect(conflict).toMatchObject({ code: 1, stdout: `Run ${runIds[4]}: conflict, nothing changed: d.txt.\n` });
    expect(gitIn(root, "for-each-ref", "--format=%(refname)", "refs/pi-flow")).toBe(`refs/pi-flow/${runIds[4]}`);
    const discarded = await flowInProcess(["runs", "discard", runIds[4]!, "--cwd", root], { env });
    expect(discarded).toMatchObject({ code: 0, stdout: `Run ${runIds[4]}: changes discarded.\n` });
    expect(gitIn(root, "for-each-ref", "refs/pi-flow")).toBe("");
    expect((await runs({ action: "apply", runIds: [runIds[4]] })).data.results).toEqual([{ runId: runIds[4], status: "nothing_to_apply" }]);
  });

  test("apply refuses a well-formed unknown run as run_unavailable and a malformed call as request_invalid", async () => {
    expect((await runs({ action: "apply", runIds: [UNKNOWN_RUN] })).error).toMatchObject({ code: "run_unavailable", message: expect.stringContaining(UNKNOWN_RUN) });
    expect((await runs({ action: "apply", runIds: ["r-0000000000000000"] })).error?.code).toBe("request_invalid");
    expect((await runs({ action: "apply", runIds: [runIds[0]], view: "patch" })).error?.code).toBe("request_invalid");
  });

  test("a bare repository as cwd is configuration_invalid before anything launches", async () => {
    mkdirSync(join(root, ".agent/bare.git"), { recursive: true });
    execFileSync("git", ["init", "-q", "--bare"], { cwd: join(root, ".agent/bare.git") });
    const { receipt } = await callForReceipt(pi, "external_delegate", {
      role: "worker",
      description: "bare",
      prompt: "nothing",
      context: { mode: "none" },
      isolation: "worktree",
      cwd: ".agent/bare.git",
    });
    expect(receipt).toMatchObject({ ok: false, data: { run: null }, error: { code: "configuration_invalid", message: expect.stringContaining("bare repository") } });
  });

  test("a workflow fans out worktree writers with agent() and lands them with tools.external_runs apply; the workflow run itself is request_invalid to apply", async () => {
    const script = `export const meta = { tools: ["external_runs"] };
      const writers = ["w1 w1.txt first -", "w2 w2.txt second -", "w3 w3.txt SECRET -"].map((task) =>
        agent({ role: "worker", prompt: "WRITE " + task, context: { mode: "none" }, isolation: "worktree" }));
      const done = await Promise.all(writers);
      const applied = await tools.external_runs({ action: "apply", runIds: done.slice(0, 2).map((child) => child.runId) });
      return { statuses: applied.data.results.map((result) => result.status), kept: done[2].runId };`;
    const { receipt } = await callForReceipt(pi, "external_workflow", { script }, { children: Array.from({ length: 6 }, () => writer) });
    expect(receipt.ok, JSON.stringify(receipt.error)).toBe(true);
    const value = receipt.data.run!.output.value as { statuses: string[]; kept: string };
    expect(value.statuses).toEqual(["applied", "applied"]);
    secretRun = value.kept;
    expect(readFileSync(join(root, "w1.txt"), "utf8")).toBe("first\n");
    expect(readFileSync(join(root, "w2.txt"), "utf8")).toBe("second\n");
    expect(existsSync(join(root, "w3.txt"))).toBe(false);
    expect(worktreeCount(root)).toBe(1);
    const workflow = await runs({ action: "apply", runIds: [receipt.data.run!.runId] });
    expect(workflow.error).toMatchObject({ code: "request_invalid", message: expect.stringContaining("is a workflow") });
  });

  test("the patch view of a child that wrote a secret is redacted on every page, followed by cursor; the ref keeps the exact bytes", async () => {
    expect(gitIn(root, "show", `refs/pi-flow/${secretRun}:w3.txt`)).toBe(SECRET_FILE.trimEnd());
    const pages: string[] = [];
    let cursor: string | undefined;
    do {
      const answer = await runs({ action: "inspect", runIds: [secretRun], view: "patch", limitBytes: 64, ...(cursor ? { cursor } : {}) });
      expect(answer.ok, JSON.stringify(answer.error)).toBe(true);
      pages.push(answer.data.page!.text);
      cursor = answer.data.page!.nextCursor;
    } while (cursor);
    expect(pages.length).toBeGreaterThan(2);
    for (const page of pages) {
      expect(Buffer.byteLength(page)).toBeLessThanOrEqual(64);
      expect(page).not.toMatch(/Zq8Lw3Nv|Gj0Ya1Ue5/); // no part of the token, on either side of a page boundary
    }
    expect(pages.join("")).toContain("+++ b/w3.txt\n@@ -0,0 +1,3 @@\n+token one = [REDACTED]\n+token two = [REDACTED]\n+token three = [REDACTED]");
  });

  test("/flow discard drops a run's kept changes: its ref is gone and a later apply has nothing to apply", async () => {
    expect(refs()).toContain(`refs/pi-flow/${secretRun}`);
    await pi.session.prompt(`/flow discard ${secretRun}`);
    expect(printed()).toEqual([`${secretRun}: 1 file(s), +3 -0: w3.txt`, `Run ${secretRun}: changes discarded.`]);
    expect(refs()).not.toContain(`refs/pi-flow/${secretRun}`);
    expect((await runs({ action: "apply", runIds: [secretRun] })).data.results).toEqual([{ runId: secretRun, status: "nothing_to_apply" }]);
    expect(existsSync(join(root, "w3.txt"))).toBe(false);
  });

  test("a background child waiting for a slot holds no worktree, and one cancelled while queued never gets one; apply refuses a child still running, and checks every target before touching any", async () => {
    const { receipt: six } = await callForReceipt(
      pi,
      "external_delegate",
      { role: "worker", description: "write six", prompt: "WRITE six e.txt echo -", context: { mode: "none" }, isolation: "worktree" },
      { children: [writer, writer] },
    );
    sixId = six.data.run!.runId;
    let running!: () => void;
    const started = new Promise<void>((resolve) => (running = resolve));
    const task = { role: "worker", prompt: "Wait.", context: { mode: "none" }, isolation: "worktree", background: true };
    const first = await pi.callTool("external_delegate", { ...task, description: "holds the slot" }, { children: [childHangs(running)] });
    const second = await pi.callTool("external_delegate", { ...task, description: "queued" });
    const [holder, queued] = [first, second].map((outcome) => (outcome.structuredContent as { data: { run: { runId: string; state: { status: string } } } }).data.run);
    expect(queued!.state.status).toBe("queued");
    await started;
    expect(worktreeCount(root)).toBe(2); // the running child's only

    for (const unfinished of [holder!.runId, queued!.runId]) {
      expect((await runs({ action: "apply", runIds: [unfinished] })).error).toMatchObject({ code: "request_invalid", message: expect.stringContaining("has not finished") });
    }
    // A finished run before an unfinished or unknown one: neither is applied, and `flow runs apply` says why (exit 2).
    const env = { ...process.env, PI_FLOW_HOME: pi.flowHome };
    for (const [second, code, why] of [[holder!.runId, "request_invalid", "has not finished"], [UNKNOWN_RUN, "run_unavailable", "not a run of this project"]] as const) {
      expect((await runs({ action: "apply", runIds: [sixId, second] })).error?.code).toBe(code);
      const command = await flowInProcess(["runs", "apply", sixId, second, "--cwd", root], { env });
      expect(command).toMatchObject({ code: 2, stdout: "" });
      expect(command.stderr).toContain(`${second}`);
      expect(command.stderr).toContain(why);
      expect(command.stderr).toContain(`(${code})`);
      expect(existsSync(join(root, "e.txt"))).toBe(false);
      expect(refs()).toContain(`refs/pi-flow/${sixId}`);
    }
    await runs({ action: "cancel", runIds: [queued!.runId] });
    await runs({ action: "cancel", runIds: [holder!.runId] });
    await runs({ action: "wait", runIds: [holder!.runId, queued!.runId] });
    expect(worktreeCount(root)).toBe(1);
    expect((await runs({ action: "apply", runIds: [queued!.runId] })).data.results).toEqual([{ runId: queued!.runId, status: "nothing_to_apply" }]);
  });
  test("/flow apply shows the change summary and asks first: declined, nothing changes; accepted, the file lands", async () => {
    const runId = sixId;
    ui.answers.push(false);
    await pi.session.prompt(`/flow apply ${runId}`);
    expect(printed()).toEqual([`${runId}: 1 file(s), +1 -0: e.txt`, "Nothing applied."]);
    expect(existsSync(join(root, "e.txt"))).toBe(false);
    ui.answers.push(true);
    await pi.session.prompt(`/flow apply ${runId}`);
    expect(printed()).toEqual([`${runId}: 1 file(s), +1 -0: e.txt`, `Run ${runId}: applied to the working tree (nothing staged): e.txt.`]);
    expect(readFileSync(join(root, "e.txt"), "utf8")).toBe("echo\n");
  });

  test("another session of the same project cannot apply this session's run: run_unavailable", async () => {
    const other = await startPiSession({ cwd: root, env: { PI_FLOW_HOME: pi.flowHome } });
    try {
      expect((await runs({ action: "apply", runIds: [sixId] }, other)).error).toMatchObject({ code: "run_unavailable", message: expect.stringContaining(sixId) });
    } finally {
      await other.dispose();
    }
  });

  test("a worktree child's write and edit of the user's own files by absolute path are refused, naming the file in its worktree; the user's tree is unchanged", async () => {
    const before = { shared: readFileSync(join(root, "shared.txt"), "utf8"), notes: readFileSync(join(root, "notes.txt"), "utf8") };
    const results: { text: string; isError: boolean }[] = [];
    const escaper: FauxResponseStep = (context) => {
      const answers = context.messages.filter((m) => m.role === "toolResult");
      if (answers.length > 0) {
        results.push(...answers.map((m) => ({ text: textOf(m.content), isError: m.isError })));
        return fauxAssistantMessage([fauxText("tried")]);
      }
      return fauxAssistantMessage(
        [
          fauxToolCall("write", { path: join(root, "shared.txt"), content: "escaped\n" }),
          fauxToolCall("edit", { path: join(root, "notes.txt"), edits: [{ oldText: "untracked", newText: "escaped" }] }),
          fauxToolCall("write", { path: join(root, "escaped/deep.txt"), content: "escaped\n" }),
        ],
        { stopReason: "toolUse" },
      );
    };
    const { receipt } = await callForReceipt(
      pi,
      "external_delegate",
      { role: "worker", description: "escape", prompt: "Write the user's files.", context: { mode: "none" }, isolation: "worktree" },
      { children: [escaper, escaper] },
    );
    expect(receipt.ok, JSON.stringify(receipt.error)).toBe(true);
    expect(receipt.warnings).not.toContain("git_controls_changed"); // its refused writes changed nothing of git's
    expect(readFileSync(join(root, "shared.txt"), "utf8")).toBe(before.shared);
    expect(readFileSync(join(root, "notes.txt"), "utf8")).toBe(before.notes);
    expect(existsSync(join(root, "escaped"))).toBe(false);
    expect(results).toHaveLength(3);
    for (const [at, file] of ["shared.txt", "notes.txt", "escaped/deep.txt"].entries()) {
      expect(results[at]!.isError, results[at]!.text).toBe(true);
      expect(results[at]!.text).toContain("outside your worktree");
      // The same file in the child's own worktree (<flow home>/worktrees/<project>/<runId>/).
      expect(results[at]!.text).toContain(`/${receipt.data.run!.runId}/${file} instead.`);
    }
  });

  test("a worktree child whose bash changes the repository's git config and hooks (shared by every worktree) is settled with the warning git_controls_changed, its diagnostics naming them", async () => {
    const child: FauxResponseStep = (context) =>
      context.messages.some((m) => m.role === "toolResult")
        ? fauxAssistantMessage([fauxText("configured")])
        : fauxAssistantMessage(
            [fauxToolCall("bash", { command: 'git config core.hooksPath .child-hooks && printf "#!/bin/sh\\n" > "$(git rev-parse --git-common-dir)/hooks/post-checkout"' })],
            { stopReason: "toolUse" },
          );
    try {
      const { result, receipt } = await callForReceipt(
        pi,
        "external_delegate",
        { role: "worker", description: "configure", prompt: "Set up git.", context: { mode: "none" }, isolation: "worktree" },
        { children: [child] },
      );
      expect(receipt.ok, JSON.stringify(receipt.error)).toBe(true);
      expect(receipt.warnings).toContain("git_controls_changed");
      expect(result.text).toContain("Warning (git_controls_changed)");
      const diagnostics = await runs({ action: "inspect", runIds: [receipt.data.run!.runId], view: "diagnostics" });
      expect(diagnostics.data.page!.text).toMatch(/git_controls_changed.*config, hooks\/post-checkout in its git folder changed while this child ran/);
    } finally {
      gitIn(root, "config", "--unset", "core.hooksPath");
      rmSync(resolve(root, gitIn(root, "rev-parse", "--git-common-dir"), "hooks/post-checkout"), { force: true });
    }
  });

  test("a worktree child that commits on the user's branch and leaves a stash entry is settled with the warnings child_moved_refs and stash_repaired, and so is its workflow", async () => {
    gitIn(root, "branch", "feature");
    const feature = gitIn(root, "rev-parse", "feature");
    // Its bash stashes an edit it never pops, and moves the user's branch onto its commit.
    const bash = (name: string): FauxResponseStep => (context) =>
      context.messages.some((m) => m.role === "toolResult")
        ? fauxAssistantMessage([fauxText("committed")])
        : fauxAssistantMessage(
            [fauxToolCall("bash", { command: `echo wip >> shared.txt && git stash -q && git checkout -q feature && echo ${name} > ${name}.txt && git add ${name}.txt && git -c user.name=c -c user.email=c@c commit -qm ${name}` })],
            { stopReason: "toolUse" },
          );
    try {
      const { result, receipt } = await callForReceipt(
        pi,
        "external_delegate",
        { role: "worker", description: "commit", prompt: "Commit on feature.", context: { mode: "none" }, isolation: "worktree" },
        { children: [bash("moved")] },
      );
      expect(receipt.ok, JSON.stringify(receipt.error)).toBe(true);
      expect(gitIn(root, "rev-parse", "feature")).toBe(feature);
      expect(receipt.warnings).toEqual(expect.arrayContaining(["child_moved_refs", "stash_repaired"]));
      expect(result.text).toContain("Warning (child_moved_refs)");
      expect(result.text).toContain("Warning (stash_repaired)");
      const script = `agent({ role: "worker", prompt: "Commit on feature.", context: { mode: "none" }, isolation: "worktree" }); return "done";`;
      const workflow = await callForReceipt(pi, "external_workflow", { script: `await ${script}` }, { children: [bash("again")] });
      expect(workflow.receipt.ok, JSON.stringify(workflow.receipt.error)).toBe(true);
      expect(workflow.receipt.warnings).toEqual(expect.arrayContaining(["child_moved_refs", "stash_repaired"]));
      expect(workflow.result.text).toContain("Warning (child_moved_refs)");
      expect(gitIn(root, "stash", "list")).toBe("");
    } finally {
      gitIn(root, "branch", "-D", "feature");
    }
  });

  test("apply through external_runs lands a child's .envrc and names it for review: the warning changes_need_review, data.results[].review and a REVIEW line", async () => {
    const { receipt } = await callForReceipt(
      pi,
      "external_delegate",
      { role: "worker", description: "envrc", prompt: "WRITE envrc .envrc export-FOO=1 -", context: { mode: "none" }, isolation: "worktree" },
      { children: [writer, writer] },
    );
    expect(receipt.ok, JSON.stringify(receipt.error)).toBe(true);
    const runId = receipt.data.run!.runId;
    try {
      const call = await pi.callTool("external_runs", { action: "apply", runIds: [runId] });
      const applied = call.structuredContent as RunsAnswer & { warnings: string[]; data: { results: { review?: { path: string; why: string }[] }[] } };
      expect(applied.data.results[0]).toMatchObject({ runId, status: "applied", files: [".envrc"], review: [{ path: ".envrc", why: expect.stringContaining("direnv") }] });
      expect(applied.warnings).toContain("changes_need_review");
      expect(call.text).toMatch(/REVIEW.*\.envrc \(direnv runs it/);
      expect(readFileSync(join(root, ".envrc"), "utf8")).toBe("export-FOO=1\n");
    } finally {
      rmSync(join(root, ".envrc"), { force: true });
    }
  });

  test("eight worktree children started at once, in one assistant message, all hold a worktree together and all succeed; git's worktree list is back to one entry", async () => {
    let arrived = 0;
    let allThere!: () => void;
    const together = new Promise<void>((resolve) => (allThere = resolve));
    let peak = 0;
    /** A child writes its file only once all eight are running, each in its worktree (test/isolation/git-core.test.ts makes sixteen at once). */
    const eighth: FauxResponseStep = async (context) => {
      const path = /TOGETHER (\S+)/.exec(context.messages.map((m) => (m.role === "user" ? textOf(m.content) : "")).join("\n"))![1]!;
      if (context.messages.some((m) => m.role === "toolResult")) return fauxAssistantMessage([fauxText(`wrote ${path}`)]);
      if (++arrived === 8) {
        peak = worktreeCount(root);
        allThere();
      }
      await together;
      return fauxAssistantMessage([fauxToolCall("write", { path, content: `${path}\n` })], { stopReason: "toolUse" });
    };
    const calls = Array.from({ length: 8 }, (_, at) => ({
      name: "external_delegate",
      args: { role: "worker", description: `together ${at}`, prompt: `TOGETHER s${at}.txt`, context: { mode: "none" }, isolation: "worktree" },
    }));
    const outcomes = await pi.callToolsAtOnce(calls, { children: Array.from({ length: 16 }, () => eighth) });
    const receipts = outcomes.map((outcome) => outcome.structuredContent as { ok: boolean; data: { run: { runId: string; changes?: unknown } } });
    expect(receipts.map((receipt) => receipt.ok)).toEqual(Array.from({ length: 8 }, () => true));
    expect(peak).toBe(9); // the user's tree and eight children's
    expect(receipts.map((receipt) => receipt.data.run.changes)).toEqual(Array.from({ length: 8 }, () => ({ files: 1, insertions: 1, deletions: 0 })));
    const kept = receipts.map(({ data }) => gitIn(root, "diff", "--name-only", `refs/pi-flow/${data.run.runId}^`, `refs/pi-flow/${data.run.runId}`));
    expect(kept).toEqual(Array.from({ length: 8 }, (_, at) => `s${at}.txt`));
    expect(worktreeCount(root)).toBe(1);
  });
});
