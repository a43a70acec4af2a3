import { execFileSync } from "node:child_process";
import { getEventListeners } from "node:events";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { fauxAssistantMessage, fauxText, fauxToolCall, type FauxResponseStep } from "@earendil-works/pi-ai";
import type { AgentToolResult } from "@earendil-works/pi-coding-agent";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { TOOL_NAMES } from "../../src/contract/envelope.ts";
import { openRunStore, RunRegistry } from "../../src/runs/index.ts";
import { childAnswers, childAnswersWhenReleased, childHangs, seenBy, type Seen } from "../support/children.ts";
import { cliTask, fakeRuns, pathWithFakes } from "../support/fake-cli.ts";
import { makeRepo, worktreeCount } from "../support/git-repo.ts";
import { PROJECT_ROOT, startPiSession, type PiTestSession } from "../support/pi-session.ts";

/**
 * Clauses of the contract seeds that pi-flow implements and that no other test pinned. Each test is
 * named after the clause it pins; docs/contract.md's clause index points here.
 */
let pi: PiTestSession;
beforeEach(async () => {
  pi = await startPiSession();
});
afterEach(() => pi.dispose());

const worker = { role: "worker", description: "Write notes", prompt: "Write the notes.", context: { mode: "none" } };
type Envelope = { ok: boolean; tool: string; action: string; data: { run?: { runId: string } | null } & Record<string, unknown>; error?: { code: string } };

/** Runs a tool's execute as Pi does, but with a signal the test owns, so its listeners can be counted. */
async function execute(name: string, params: Record<string, unknown>, signal: AbortSignal, onUpdate?: (update: AgentToolResult<unknown>) => void) {
  const tool = pi.session.getToolDefinition(name);
  if (!tool) throw new Error(`${name} is not registered`);
  const ctx = pi.session.extensionRunner.createToolContext("call_direct", signal);
  const result = await tool.execute("call_direct", params as never, signal, onUpdate as never, ctx);
  return (result as unknown as { structuredContent: Envelope }).structuredContent;
}

const abortListeners = (signal: AbortSignal) => getEventListeners(signal, "abort").length;

describe("tool definitions", () => {
  test("§4.5 (deviation): the four tools run in parallel mode, never sequential", () => {
    for (const name of TOOL_NAMES) {
      const definition = pi.session.getToolDefinition(name);
      expect(definition, name).toBeDefined();
      expect(definition?.executionMode ?? "parallel", name).toBe("parallel");
    }
  });
});

describe("cancellation and lifecycle", () => {
  test("invariant 7: an already-aborted signal fails every tool at once with an AbortError, and no run is created", async () => {
    const calls: [string, Record<string, unknown>][] = [
      ["external_delegate", worker],
      ["external_delegate", { ...worker, background: true }],
      ["external_workflow", { script: "return 1;" }],
      ["external_workflow", { script: "return 1;", background: true }],
      ["external_runs", { action: "list" }],
      ["external_help", { topic: "contracts" }],
    ];
    for (const [name, params] of calls) {
      await expect(execute(name, params, AbortSignal.abort()), `${name} ${JSON.stringify(params)}`).rejects.toMatchObject({ name: "AbortError" });
    }
    // Aborted after the call began but before its run launched (the launch awaits first): still no run.
    for (const background of [false, true]) {
      const controller = new AbortController();
      const pending = execute("external_workflow", { script: "return 1;", background }, controller.signal);
      controller.abort();
      await expect(pending, `background: ${background}`).rejects.toMatchObject({ name: "AbortError" });
    }
    const listed = (await pi.callTool("external_runs", { action: "list" })).structuredContent as { data: { runs: unknown[]; workflows: unknown[] } };
    expect(listed.data).toMatchObject({ runs: [], workflows: [] });
    expect(pi.pendingParentSteps()).toBe(0);
  });

  test("invariant 7: a delegation aborted while git checks its worktree's repository launches nothing", async () => {
    // A git that holds the repository check until the test has aborted the call, then runs the real one.
    const gate = mkdtempSync(join(tmpdir(), "pi-flow-gate-"));
    const realGit = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim();
    writeFileSync(
      join(gate, "git"),
      `#!/bin/sh\ncase " $* " in *" --is-bare-repository "*) : > "${gate}/started"; while [ ! -e "${gate}/go" ]; do sleep 0.01; done;; esac\nexec "${realGit}" "$@"\n`,
      { mode: 0o755 },
    );
    const repo = makeRepo();
    const inRepo = await startPiSession({ cwd: repo });
    const path = process.env.PATH;
    process.env.PATH = `${gate}${delimiter}${path ?? ""}`;
    try {
      const tool = inRepo.session.getToolDefinition("external_delegate")!;
      const controller = new AbortController();
      const ctx = inRepo.session.extensionRunner.createToolContext("call_gate", controller.signal);
      const pending = tool.execute("call_gate", { ...worker, isolation: "worktree" } as never, controller.signal, undefined, ctx);
      pending.catch(() => undefined);
      await expect.poll(() => existsSync(join(gate, "started"))).toBe(true);
      controller.abort();
      writeFileSync(join(gate, "go"), "");
      await expect(pending).rejects.toMatchObject({ name: "AbortError" });
    } finally {
      process.env.PATH = path;
    }
    try {
      const listed = (await inRepo.callTool("external_runs", { action: "list" })).structuredContent as { data: { runs: unknown[] } };
      expect(listed.data.runs).toEqual([]);
      expect(worktreeCount(repo)).toBe(1);
    } finally {
      await inRepo.dispose();
      rmSync(gate, { recursive: true, force: true });
      rmSync(repo, { recursive: true, force: true });
    }
  });

  test("error codes: session_closed: a delegation or workflow whose session closes before its run registers launches nothing", async () => {
    const calls: [string, Record<string, unknown>][] = [
      ["external_workflow", { script: "return 1;" }],
      ["external_workflow", { script: "return 1;", background: true }],
      ["external_delegate", worker],
    ];
    // Each call starts, then the session ends (a reload) before the call's launch goes on.
    const pending = calls.map(([name, params]) => execute(name, params, new AbortController().signal));
    await pi.session.extensionRunner.emit({ type: "session_shutdown", reason: "reload" });
    const receipts = await Promise.all(pending);
    expect(receipts.map((receipt) => [receipt.tool, receipt.ok, receipt.error?.code, receipt.data.run])).toEqual(
      calls.map(([name]) => [name, false, "session_closed", null]),
    );
    expect(pi.pendingParentSteps()).toBe(0);
  });

  test("invariant 8: abort listeners are removed after settlement, on every exit path", async () => {
    const settledDelegate = new AbortController();
    pi.queueChildren([childAnswers("notes")]);
    expect(await execute("external_delegate", worker, settledDelegate.signal)).toMatchObject({ ok: true });
    expect(abortListeners(settledDelegate.signal)).toBe(0);

    const rejected = new AbortController();
    expect(await execute("external_delegate", { ...worker, role: "no_such_role" }, rejected.signal)).toMatchObject({ ok: false, error: { code: "selection_invalid" } });
    expect(abortListeners(rejected.signal)).toBe(0);

    const settledWorkflow = new AbortController();
    pi.queueChildren([childAnswers("child notes")]);
    const script = `return (await agent({ role: "worker", description: "d", prompt: "p", context: { mode: "none" } })).value;`;
    expect(await execute("external_workflow", { script }, settledWorkflow.signal)).toMatchObject({ ok: true });
    expect(abortListeners(settledWorkflow.signal)).toBe(0);

    const aborted = new AbortController();
    let started!: () => void;
    const childStarted = new Promise<void>((resolve) => (started = resolve));
    pi.queueChildren([childHangs(() => started())]);
    const call = execute("external_delegate", worker, aborted.signal);
    await childStarted;
    expect(abortListeners(aborted.signal)).toBeGreaterThan(0);
    aborted.abort();
    expect(await call).toMatchObject({ ok: false, error: { code: "cancelled" } });
    expect(abortListeners(aborted.signal)).toBe(0);
  });

  test("invariant 8: a claude child's call removes its abort listeners whether the CLI answers or the parent aborts", async () => {
    await pi.dispose();
    pi = await startPiSession({ env: { PATH: pathWithFakes(), PI_FLOW_CLI_KILL_GRACE_MS: "300" } });
    const answered = new AbortController();
    expect(await execute("external_delegate", cliTask("claude"), answered.signal)).toMatchObject({ ok: true });
    expect(abortListeners(answered.signal)).toBe(0);
    const aborted = new AbortController();
    const call = execute("external_delegate", cliTask("claude", "[fake:hang]"), aborted.signal);
    await expect.poll(() => fakeRuns(pi.cwd, "claude").length).toBe(2);
    aborted.abort();
    expect(await call).toMatchObject({ ok: false, error: { code: "cancelled" } });
    expect(abortListeners(aborted.signal)).toBe(0);
  });

  test("invariant 8: a wait removes its abort listener whether its runs settle or its timeout ends it", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const gated: FauxResponseStep = async () => {
      await gate;
      return fauxAssistantMessage([fauxText("late")]);
    };
    pi.queueChildren([gated]);
    const accepted = await execute("external_delegate", { ...worker, background: true }, new AbortController().signal);
    const runId = accepted.data.run!.runId;
    const timedOut = new AbortController();
    expect(await execute("external_runs", { action: "wait", runIds: [runId], timeoutMs: 1 }, timedOut.signal)).toMatchObject({ ok: true, data: { pending: [runId] } });
    expect(abortListeners(timedOut.signal)).toBe(0);
    const settles = new AbortController();
    const waiting = execute("external_runs", { action: "wait", runIds: [runId] }, settles.signal);
    release();
    expect(await waiting).toMatchObject({ ok: true, data: { completed: [{ runId }] } });
    expect(abortListeners(settles.signal)).toBe(0);
  });
});

/**
 * Node's active handles by type (timers, pipes, processes, watchers), for leak checks. One-off
 * requests (a file write in flight: FSReqPromise, CloseReq…) end by themselves and are left out.
 */
function activeHandles(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const type of process.getActiveResourcesInfo()) if (!/Req/.test(type)) counts[type] = (counts[type] ?? 0) + 1;
  return counts;
}

describe("§17 cancellation: nested abort", () => {
  /** Resolves when a call of `toolName` reports progress, also a call a codemode script makes. */
  const updateFrom = (toolName: string) =>
    new Promise<void>((resolve) => {
      const unsubscribe = pi.session.subscribe((event) => {
        if (event.type === "tool_execution_update" && event.toolName === toolName) (unsubscribe(), resolve());
      });
    });
  const runIdOf = (result: { structuredContent: unknown }) => (result.structuredContent as Envelope).data.run!.runId;

  test("§17 nested abort: Esc while a script awaits tools.external_delegate stops that child; while it awaits a wait, only the wait ends", async () => {
    let started!: () => void;
    const childStarted = new Promise<void>((resolve) => (started = resolve));
    const foreground = pi.runCodemode(`return await tools.external_delegate(${JSON.stringify(worker)});`, { children: [childHangs(started)] });
    await childStarted;
    await pi.session.abort();
    expect((await foreground).isError).toBe(true);
    const listed = await pi.callTool("external_runs", { action: "list" });
    expect((listed.structuredContent as { data: { runs: { state: unknown }[] } }).data.runs).toMatchObject([{ state: { status: "done", outcome: "cancelled" } }]);

    const gated = childAnswersWhenReleased("background answer");
    const runId = runIdOf(await pi.callTool("external_delegate", { ...worker, background: true }, { children: [gated.step] }));
    await gated.started;
    const waiting = updateFrom("external_runs");
    const waited = pi.runCodemode(`return await tools.external_runs({ action: "wait", runIds: [${JSON.stringify(runId)}] });`);
    await waiting;
    await pi.session.abort();
    expect((await waited).text).toContain("aborted");
    const inspected = await pi.callTool("external_runs", { action: "inspect", runIds: [runId] });
    expect(inspected.structuredContent).toMatchObject({ ok: true, data: { entries: [{ live: true, state: { status: "running" } }] } });
    gated.release();
    const completions = () => pi.session.messages.filter((m) => (m as { customType?: string }).customType === "pi-flow-run-completed");
    await expect.poll(() => completions().length).toBe(1);
    expect(completions()[0]).toMatchObject({ details: { runId, state: { outcome: "succeeded" } } });
  });
});

describe("§17 updates", () => {
  test("§17 updates: several while a run goes, none once a call settled, none from calls that only answer", async () => {
    const updatesAfterEnd: string[] = [];
    const updated = new Map<string, number>();
    const ended = new Set<string>();
    const unsubscribe = pi.session.subscribe((event) => {
      if (event.type === "tool_execution_update") {
        if (ended.has(event.toolCallId)) updatesAfterEnd.push(`${event.toolName} ${event.toolCallId}`);
        updated.set(event.toolName, (updated.get(event.toolName) ?? 0) + 1);
      }
      if (event.type === "tool_execution_end") ended.add(event.toolCallId);
    });
    try {
      const usesBash: FauxResponseStep = () => fauxAssistantMessage([fauxToolCall("bash", { command: "true" })], { stopReason: "toolUse" });
      // Direct and from a script; the script goes on (a second child) after its first call settled.
      await pi.callTool("external_delegate", worker, { children: [usesBash, childAnswers("direct")] });
      const nested = `await tools.external_delegate(${JSON.stringify(worker)}); return (await tools.external_delegate(${JSON.stringify(worker)})).ok;`;
      expect((await pi.runCodemode(nested, { children: [usesBash, childAnswers("one"), childAnswers("two")] })).value).toBe(true);
      expect(updated.get("external_delegate")).toBeGreaterThanOrEqual(6);
      await pi.callTool("external_help", { topic: "contracts" });
      await pi.callTool("external_runs", { action: "list" });
      expect(updated.has("external_help")).toBe(false);
      expect(updated.has("external_runs")).toBe(false);
      expect(updatesAfterEnd).toEqual([]);
    } finally {
      unsubscribe();
    }
  });
});

describe("lifecycle cleanup", () => {
  test("invariant 21: timers, subscriptions and streams are cleaned up: settled runs leave no active handle behind", async () => {
    const script = `return (await agent({ role: "worker", description: "d", prompt: "p", context: { mode: "none" } })).value;`;
    const round = async () => {
      pi.queueChildren([childAnswers("one"), childAnswers("two")]);
      expect(await execute("external_delegate", worker, new AbortController().signal)).toMatchObject({ ok: true });
      expect(await execute("external_workflow", { script }, new AbortController().signal)).toMatchObject({ ok: true });
      await new Promise((resolve) => setImmediate(resolve));
    };
    await round(); // warms up what stays for the session's lifetime
    const before = activeHandles();
    for (let i = 0; i < 3; i++) await round();
    // No kind of handle grows (one may shrink: an earlier test's worker finishing its close).
    const after = activeHandles();
    for (const [type, count] of Object.entries(after)) expect(count, type).toBeLessThanOrEqual(before[type] ?? 0);
  });
});

describe("protocol", () => {
  test("§6.5: unexpected exceptions are thrown, not returned, also after a partial update", async () => {
    const broken = new Error("renderer exploded");
    const updates: unknown[] = [];
    const throwing = (update: AgentToolResult<unknown>) => {
      updates.push(update);
      throw broken;
    };
    pi.queueChildren([childAnswers("notes")]);
    await expect(execute("external_delegate", worker, new AbortController().signal, throwing)).rejects.toBe(broken);
    // It threw at a partial update ("Child … started."), and the call rejected with that very error.
    expect(JSON.stringify(updates[0])).toMatch(/Child \S+ started\./);

    // A wait that throws gives its claim back: the run's completion is still published, once.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    pi.queueChildren([
      async () => {
        await gate;
        return fauxAssistantMessage([fauxText("late")]);
      },
    ]);
    const accepted = await execute("external_delegate", { ...worker, background: true }, new AbortController().signal);
    const runId = accepted.data.run!.runId;
    await expect(execute("external_runs", { action: "wait", runIds: [runId] }, new AbortController().signal, throwing)).rejects.toBe(broken);
    release();
    const completions = () => pi.session.messages.filter((m) => (m as { customType?: string }).customType === "pi-flow-run-completed");
    await expect.poll(() => completions().length).toBe(1);
  });

  test("envelope: action is the one requested, on success and on failure", async () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ["external_runs", { action: "list" }, "list"],
      ["external_runs", { action: "inspect", runIds: ["not-an-id"] }, "inspect"],
      ["external_runs", { action: "wait", runIds: [] }, "wait"],
      ["external_runs", { action: "cancel", runIds: ["not-an-id"] }, "cancel"],
      ["external_runs", { action: "steer", runIds: ["not-an-id"], message: "m" }, "steer"],
      ["external_help", { topic: "errors" }, "help"],
      ["external_help", { topic: "no-such-topic" }, "help"],
      ["external_workflow", { script: "return 1;" }, "run"],
      ["external_workflow", {}, "run"],
      ["external_delegate", { ...worker, role: "no_such_role" }, "delegate"],
    ];
    for (const [tool, args, action] of cases) {
      const envelope = (await pi.callTool(tool, args)).structuredContent as Envelope;
      expect(envelope, JSON.stringify(args)).toMatchObject({ tool, action });
    }
  });

  test("runs: refs are ready-to-call external_runs arguments: summary is a one-ID batch, final and diagnostics single pages; no run view holds a private path or launch details", async () => {
    const done = (await pi.callTool("external_delegate", worker, { children: [childAnswers("the notes")] })).structuredContent as {
      data: { run: { runId: string; refs: Record<string, Record<string, unknown>> } };
    };
    const failed = (await pi.callTool("external_workflow", { script: "throw new Error('no notes');" })).structuredContent as typeof done;
    const { runId, refs } = done.data.run;
    const summary = (await pi.callTool("external_runs", refs.summary!)).structuredContent as { ok: boolean; data: { mode: string; entries: { runId: string }[] } };
    expect(summary).toMatchObject({ ok: true, data: { mode: "batch", entries: [{ runId }] } });
    expect(summary.data.entries).toHaveLength(1);
    const final = (await pi.callTool("external_runs", refs.final!)).structuredContent;
    expect(final).toMatchObject({ ok: true, data: { mode: "single", runId, view: "final", finalAvailable: true, page: { text: "the notes", complete: true } } });
    const diagnostics = failed.data.run.refs.diagnostics!;
    const page = (await pi.callTool("external_runs", diagnostics)).structuredContent;
    expect(page).toMatchObject({ ok: true, data: { mode: "single", runId: failed.data.run.runId, view: "diagnostics", page: { text: expect.stringContaining("no notes") } } });
    // Runs: private evidence paths and launch details (the prompt, the folder) are in no run view.
    const served = [done, failed, (await pi.callTool("external_runs", { action: "list" })).structuredContent, summary];
    for (const envelope of served) {
      const json = JSON.stringify(envelope);
      for (const hidden of [pi.flowHome, pi.agentDir, pi.cwd, worker.prompt]) expect(json).not.toContain(hidden);
    }
  });

  test("error codes: a host redaction hook that replaces content drops the structured envelope unless it supplies a replacement; §17 post-hook failure: a hook that throws leaves the tool's result as it was", async () => {
    const hooked = await startPiSession({
      extensions: [
        (api) => {
          api.on("tool_result", (event) => {
            if (event.toolName !== "external_delegate") return undefined;
            if ((event.input as { description: string }).description === "throws") throw new Error("the policy hook broke");
            const text = "[answer withheld by policy]";
            // A hook that knows the envelope supplies its own replacement; one that does not, only content.
            return (event.input as { description: string }).description === "replaced"
              ? { content: [{ type: "text", text }], structuredContent: { withheld: true } }
              : { content: [{ type: "text", text }] };
          });
        },
      ],
    });
    try {
      const outcome = await hooked.runCodemode(
        [
          `const plain = await tools.external_delegate({ role: "worker", description: "plain", prompt: "p", context: { mode: "none" } });`,
          `const replaced = await tools.external_delegate({ role: "worker", description: "replaced", prompt: "p", context: { mode: "none" } });`,
          `const broken = await tools.external_delegate({ role: "worker", description: "throws", prompt: "p", context: { mode: "none" } });`,
          `return { plain, replaced, broken };`,
        ].join("\n"),
        { children: [childAnswers("CUSTOMER-RECORD-1"), childAnswers("CUSTOMER-RECORD-2"), childAnswers("NOTES-3")] },
      );
      // Without a replacement the script gets the redacted text, never the envelope with the answer.
      expect(outcome.value).toMatchObject({ plain: "[answer withheld by policy]", replaced: { withheld: true } });
      // A hook that throws replaces nothing: the script gets the envelope the tool returned, the run settled once.
      expect(outcome.value).toMatchObject({ broken: { ok: true, data: { run: { state: { outcome: "succeeded" }, output: { value: "NOTES-3" } } } } });
      const runId = (outcome.value as { broken: { data: { run: { runId: string } } } }).broken.data.run.runId;
      const summary = await hooked.callTool("external_runs", { action: "inspect", runIds: [runId] });
      expect(summary.structuredContent).toMatchObject({ ok: true, data: { entries: [{ runId, live: false, state: { status: "done", outcome: "succeeded" } }] } });
    } finally {
      await hooked.dispose();
    }
  });

  test("invariant 12: concurrent calls are correlated by toolCallId, never by tool name; invariant 16: the transcript keeps call order", async () => {
    // The first call's child answers only after the second's: completion order is the reverse of call order.
    let secondAnswered!: () => void;
    const second = new Promise<void>((resolve) => (secondAnswered = resolve));
    const byPrompt: FauxResponseStep = async (context) => {
      const { user } = seenBy(context.messages);
      if (user.includes("FIRST")) {
        await second;
        return fauxAssistantMessage([fauxText("answer to FIRST")]);
      }
      secondAnswered();
      return fauxAssistantMessage([fauxText("answer to SECOND")]);
    };
    const [first, next] = await pi.callToolsAtOnce(
      [
        { name: "external_delegate", args: { ...worker, description: "first", prompt: "FIRST task" } },
        { name: "external_delegate", args: { ...worker, description: "second", prompt: "SECOND task" } },
      ],
      { children: [byPrompt, byPrompt] },
    );
    // Invariant 16: the second call settled first, yet the results stand in the transcript in call order.
    const results = pi.session.messages.filter((message) => message.role === "toolResult").map((message) => (message as { toolCallId: string }).toolCallId);
    expect(results).toEqual(["call_1", "call_2"]);
    for (const [outcome, label] of [[first!, "FIRST"], [next!, "SECOND"]] as const) {
      const run = (outcome.structuredContent as { data: { run: { runId: string; output: { value: unknown } } } }).data.run;
      expect(run.output.value).toBe(`answer to ${label}`);
      expect(outcome.details).toMatchObject({ runId: run.runId });
      const launch = await pi.callTool("external_runs", { action: "inspect", runIds: [run.runId], view: "launch" });
      const page = (launch.structuredContent as { data: { page: { text: string } } }).data.page.text;
      expect(JSON.parse(page)).toMatchObject({ toolCallId: label === "FIRST" ? "call_1" : "call_2" });
    }
  });
});

describe("steering", () => {
  test("§9.2: parent steering and child steering are separate queues", async () => {
    // The child's tool waits for a file the test writes, so both steers are sent while it runs.
    const command = "touch started && while [ ! -f go ]; do sleep 0.05; done && echo tool-finished";
    const callsBash: FauxResponseStep = () => fauxAssistantMessage([fauxToolCall("bash", { command })], { stopReason: "toolUse" });
    const seen: Seen[] = [];
    const call = pi.callTool("external_delegate", worker, { children: [callsBash, childAnswers("done", seen)] });
    await expect.poll(() => existsSync(join(pi.cwd, "started"))).toBe(true);
    const listed = await execute("external_runs", { action: "list" }, new AbortController().signal);
    const [child] = listed.data.runs as { runId: string }[];
    await pi.session.steer("PARENT-ONLY-7");
    expect(await execute("external_runs", { action: "steer", runIds: [child!.runId], message: "CHILD-ONLY-8" }, new AbortController().signal)).toMatchObject({
      ok: true,
      data: { status: "queued" },
    });
    expect(pi.session.getSteeringMessages()).toEqual(["PARENT-ONLY-7"]);
    writeFileSync(join(pi.cwd, "go"), "");
    await call;
    expect(seen[0]!.all).toContain("CHILD-ONLY-8");
    expect(seen[0]!.all).not.toContain("PARENT-ONLY-7");
    const parentText = JSON.stringify(pi.session.messages.filter((message) => message.role === "user"));
    expect(parentText).toContain("PARENT-ONLY-7");
    expect(parentText).not.toContain("CHILD-ONLY-8");
  });
});

describe("handoff boundaries", () => {
  test("handoff: neither store() values nor nested results become parent history; what the outer call returns does; pending outer arguments never do", async () => {
    const workflowScript = [
      // Built at run time, so the value is not in the script text the parent's transcript holds.
      `store("note", ["STORED", "SECRET", "2"].join("-"));`,
      `const r = await agent({ role: "worker", description: "d", prompt: "p", context: { mode: "none" } });`,
      `return r.value.length;`,
    ].join("\n");
    const nestedSeen: Seen[] = [];
    const outcome = await pi.runCodemode(
      [
        // The outer call is still pending while its nested child starts: a full context leaves it out.
        `// OUTER-ARGS-5`,
        `const nested = await tools.external_delegate({ role: "worker", description: "nested", prompt: "p", context: { mode: "full" } });`,
        `const flow = await tools.external_workflow({ script: ${JSON.stringify(workflowScript)} });`,
        `return nested.ok && flow.ok ? ["RETURNED", "4"].join("-") : "broken";`,
      ].join("\n"),
      { children: [childAnswers("NESTED-SECRET-1", nestedSeen), childAnswers("WF-CHILD-3")] },
    );
    expect(outcome.value).toBe("RETURNED-4");
    expect(nestedSeen[0]!.all).toContain("<parent_conversation");
    // Neither the pending outer arguments nor the host's nested call IDs reach the child.
    expect(nestedSeen[0]!.all).not.toContain("OUTER-ARGS-5");
    expect(nestedSeen[0]!.all).not.toMatch(/code_\d/);
    const seen: Seen[] = [];
    await pi.callTool("external_delegate", { ...worker, context: { mode: "full" } }, { children: [childAnswers("later", seen)] });
    expect(seen[0]!.all).toContain("RETURNED-4");
    for (const hidden of ["NESTED-SECRET-1", "STORED-SECRET-2", "WF-CHILD-3"]) expect(seen[0]!.all).not.toContain(hidden);
  });
});

describe("handoff boundaries: the child-context guard", () => {
  test("child-context guard: a child built by pi-flow never reinstalls pi-flow, even where pi-flow is an ambient extension", async () => {
    // pi-flow installed in Pi's agent directory, as a user would: every session built from now on
    // loads it, children included. The wrapper records what pi-flow registers there.
    const folder = join(pi.agentDir, "extensions", "flow-probe");
    mkdirSync(folder, { recursive: true });
    const probe = [
      `import piFlow from ${JSON.stringify(join(PROJECT_ROOT, "index.ts"))};`,
      `export default function probe(pi) {`,
      `  const seen = (globalThis.__flowProbe ??= { loads: 0, registered: [] });`,
      `  seen.loads++;`,
      `  piFlow(new Proxy(pi, { get: (api, key) => key === "registerTool" ? (tool) => { seen.registered.push(tool.name); return api.registerTool(tool); } : api[key] }));`,
      `}`,
    ].join("\n");
    writeFileSync(join(folder, "index.ts"), probe);
    const seenByChild: Seen[] = [];
    const { structuredContent } = await pi.callTool("external_delegate", worker, { children: [childAnswers("done", seenByChild)] });
    expect(structuredContent).toMatchObject({ ok: true });
    const recorded = (globalThis as { __flowProbe?: { loads: number; registered: string[] } }).__flowProbe;
    expect(recorded?.loads).toBe(1);
    expect(recorded?.registered).toEqual([]);
  });
});

describe("validation", () => {
  test("§4.4: no hidden coercion after validation: values are used as given, or refused", async () => {
    pi.queueChildren([childAnswers("abcdef")]);
    const settled = await execute("external_delegate", { ...worker, description: "  Spaced   label  " }, new AbortController().signal);
    const run = settled.data.run as { runId: string; task: { description: string } };
    expect(run.task.description).toBe("  Spaced   label  ");
    // A padded ID is not trimmed into a valid one.
    const padded = await execute("external_runs", { action: "inspect", runIds: [` ${run.runId} `] }, new AbortController().signal);
    expect(padded).toMatchObject({ ok: false, error: { code: "request_invalid" } });
    // A budget of one byte is one byte, not raised to a floor.
    const page = await execute("external_runs", { action: "inspect", runIds: [run.runId], view: "final", limitBytes: 1 }, new AbortController().signal);
    expect(page).toMatchObject({ ok: true, data: { page: { text: "a", complete: false } } });
  });
});

describe("context", () => {
  test("§5.5: ctx is never retained across a session switch: the old session's runs end and nothing reaches it afterwards", async () => {
    const errors: unknown[] = [];
    pi.session.extensionRunner.onError((error) => errors.push(error));
    let started!: () => void;
    const childStarted = new Promise<void>((resolve) => (started = resolve));
    pi.queueChildren([childHangs(() => started())]);
    const accepted = await execute("external_delegate", { ...worker, background: true }, new AbortController().signal);
    const runId = accepted.data.run!.runId;
    await childStarted;
    // What Pi does on /new: the old session shuts down, then its ctx is invalidated.
    await pi.session.extensionRunner.emit({ type: "session_shutdown", reason: "new" });
    pi.session.extensionRunner.invalidate();
    // The run ended with its session, read here as another process would; the stale ctx was never used.
    const evidence = openRunStore({ home: pi.flowHome, cwd: pi.cwd, sessionId: pi.session.sessionId, registry: new RunRegistry() });
    expect(evidence.view(runId).state).toMatchObject({ status: "done", outcome: "cancelled" });
    await new Promise((resolve) => setImmediate(resolve));
    expect(errors).toEqual([]);
    expect(pi.session.messages.filter((m) => (m as { customType?: string }).customType === "pi-flow-run-completed")).toEqual([]);
  });
});
