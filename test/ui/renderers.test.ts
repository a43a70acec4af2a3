import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import type { ChildEntry } from "../../src/contract/child-entry.ts";
import { helpRenderers, runsRenderers } from "../../src/ui/query-renderers.ts";
import { delegateRenderers, workflowRenderers } from "../../src/ui/run-renderers.ts";
import { answerText } from "../../src/ui/run-body.ts";
import { completionRow, completionsRow, runView, seen, toolRow, WIDTHS, type Update } from "./views.ts";

const T0 = Date.parse("2026-01-05T10:00:00.000Z");
beforeAll(() => {
  vi.useFakeTimers({ now: T0 });
});
afterAll(() => {
  vi.useRealTimers();
});

/** Every view at every width: a file per view, no line wider than its width (seen() checks). */
async function capture(name: string, draw: (width: number) => string): Promise<void> {
  const text = WIDTHS.map((width) => `--- width ${width}\n${draw(width)}`).join("\n");
  await expect(text + "\n").toMatchFileSnapshot(`captures/${name}.txt`);
}

const delegateArgs = { role: "explorer", description: "Count the TypeScript files", prompt: "Count them." };
const runningDelegate: Update = {
  partial: true,
  details: { runId: "c-7f3a9d", phase: "running", progress: { activity: "calling grep", usage: { turns: 1, toolCalls: 2, inputTokens: 1200, outputTokens: 180, costUsd: 0.0061 } } },
};
const settledDelegate = (view = runView({ runId: "c-7f3a9d", kind: "agent" })): Update => ({ details: { runId: view.runId, phase: "settled", run: view }, durationMs: 12_450, isError: view.state.outcome !== "succeeded" });
const failedView = runView({
  runId: "c-11b0e2",
  kind: "agent",
  state: { status: "done", outcome: "failed", error: { code: "failed", message: "The child's model failed: 529 overloaded" } },
  output: { finalAvailable: false, delivery: "none" },
});

describe("external_delegate rows", () => {
  test("running, live from details, with elapsed time that moves", async () => {
    vi.setSystemTime(T0);
    const collapsed = toolRow("external_delegate", delegateRenderers, delegateArgs, [runningDelegate]);
    const expanded = toolRow("external_delegate", delegateRenderers, delegateArgs, [runningDelegate], true);
    vi.setSystemTime(T0 + 4_200);
    await capture("delegate-running", (width) => `${seen(collapsed, width)}\n${seen(expanded, width)}`);
    expect(seen(collapsed, 80)).toContain("4.2s");
    vi.setSystemTime(T0 + 9_000);
    expect(seen(collapsed, 80)).toContain("9.0s");
  });

  test("settled: one line collapsed; outcome, usage and answer expanded", async () => {
    const collapsed = toolRow("external_delegate", delegateRenderers, delegateArgs, [runningDelegate, settledDelegate()]);
    const expanded = toolRow("external_delegate", delegateRenderers, delegateArgs, [runningDelegate, settledDelegate()], true);
    await capture("delegate-settled", (width) => `${seen(collapsed, width)}\n${seen(expanded, width)}`);
    expect(seen(collapsed, 120)).toMatch(/✓ Delegate explorer Count the TypeScript files 12\.4s · 8\.3k tok \$0\.02/);
    expect(seen(expanded, 120)).toContain("There are 42 TypeScript files under src/.");
  });

  test("a late update never overwrites the settled row", () => {
    const row = toolRow("external_delegate", delegateRenderers, delegateArgs, [runningDelegate, settledDelegate(), runningDelegate], true);
    const settled = toolRow("external_delegate", delegateRenderers, delegateArgs, [runningDelegate, settledDelegate()], true);
    for (const width of WIDTHS) expect(seen(row, width)).toBe(seen(settled, width));
    expect(seen(row, 80)).not.toContain("calling grep");
  });

  test("failed: the error shows even collapsed", async () => {
    const collapsed = toolRow("external_delegate", delegateRenderers, delegateArgs, [settledDelegate(failedView)]);
    const expanded = toolRow("external_delegate", delegateRenderers, delegateArgs, [settledDelegate(failedView)], true);
    await capture("delegate-failed", (width) => `${seen(collapsed, width)}\n${seen(expanded, width)}`);
    expect(seen(collapsed, 120)).toContain("failed: The child's model failed: 529 overloaded");
  });

  test("rejected before a run existed", async () => {
    const rejected: Update = { details: { phase: "rejected" }, isError: true, text: "external_delegate rejected (selection_invalid): Unknown role \"explorr\". Roles: worker, explorer, reviewer." };
    const collapsed = toolRow("external_delegate", delegateRenderers, { ...delegateArgs, role: "explorr" }, [rejected]);
    await capture("delegate-rejected", (width) => seen(collapsed, width));
    expect(seen(collapsed, 120)).toMatch(/✗ Delegate explorr/);
  });

  test("background: accepted, then its completion message", async () => {
    const accepted = runView({ runId: "c-5e21aa", kind: "agent", background: true, live: true, state: { status: "running", outcome: null }, timing: { startedAt: "2026-01-05T10:00:00.000Z" }, output: { finalAvailable: false, delivery: "none" } });
    delete accepted.usage;
    const update: Update = { details: { runId: accepted.runId, phase: "accepted", run: accepted }, durationMs: 35 };
    const collapsed = toolRow("external_delegate", delegateRenderers, { ...delegateArgs, background: true }, [update]);
    const expanded = toolRow("external_delegate", delegateRenderers, { ...delegateArgs, background: true }, [update], true);
    await capture("delegate-background-accepted", (width) => `${seen(collapsed, width)}\n${seen(expanded, width)}`);
    expect(seen(collapsed, 80)).toMatch(/↗ Delegate explorer .*background/);

    const done = runView({ runId: "c-5e21aa", kind: "agent", background: true });
    await capture("completion-message", (width) => `${seen(completionRow(done), width)}\n${seen(completionRow(done, true), width)}`);
    const failed = { ...failedView, background: true };
    await capture("completion-message-failed", (width) => seen(completionRow(failed), width));
    expect(seen(completionRow(done), 120)).toMatch(/✓ Background delegate explorer Count the TypeScript files 12\.4s · 8\.3k tok \$0\.02/);

    // Completions that settled together arrive as one message: each run is drawn as its own completion.
    for (const width of WIDTHS) {
      const drawn = (text: string) => text.split("\n").filter((line) => line.trim() !== "");
      expect(drawn(seen(completionsRow([done, failed]), width))).toEqual([...drawn(seen(completionRow(done), width)), ...drawn(seen(completionRow(failed), width))]);
    }
  });
});

describe("external_workflow rows", () => {
  const args = { workflow: "review", args: { target: "src/" }, description: "Review src/ through three lenses" };
  const children = (): ChildEntry[] => [
    { index: 0, runId: "c-a1", description: "Review correctness", status: "succeeded", startedAt: T0, endedAt: T0 + 8_100, lastOutput: "No correctness issues found.", usage: { turns: 1, inputTokens: 900, outputTokens: 200, costUsd: 0.0042 } },
    { index: 1, runId: "c-a2", description: "Review tests", status: "running", startedAt: T0 + 100, activity: "calling read", lastOutput: "Looking at test/e2e first.", usage: { turns: 1, inputTokens: 700, outputTokens: 90, costUsd: 0.0025 } },
    { index: 2, runId: "c-a3", description: "Review simplicity", status: "failed", startedAt: T0 + 200, endedAt: T0 + 3_000 },
  ];
  const running: Update = { partial: true, details: { runId: "w-91c2", phase: "running", children: children() } };

  test("running: done/total and spend so far collapsed; the children as a tree expanded", async () => {
    vi.setSystemTime(T0);
    const collapsed = toolRow("external_workflow", workflowRenderers, args, [running]);
    const expanded = toolRow("external_workflow", workflowRenderers, args, [running], true);
    vi.setSystemTime(T0 + 10_000);
    await capture("workflow-running", (width) => `${seen(collapsed, width)}\n${seen(expanded, width)}`);
    expect(seen(collapsed, 120)).toContain("2/3 (1 failed)");
    expect(seen(expanded, 120)).toMatch(/├─ … Review tests 9\.9s/);
    expect(seen(expanded, 120)).toContain("calling read “Looking at test/e2e first.”");
  });

  test("settled: the tree stays, with the run's facts and answer", async () => {
    const view = runView({
      runId: "w-91c2",
      kind: "workflow",
      task: { description: "Review src/ through three lenses", workflow: "review", source: "shipped" },
      children: { count: 3, failed: 1 },
      output: { finalAvailable: true, delivery: "inline", value: { verdicts: ["ok", "add a test for retries"] } },
    });
    const settled: Update = { details: { runId: "w-91c2", phase: "settled", run: view }, durationMs: 12_450 };
    const collapsed = toolRow("external_workflow", workflowRenderers, args, [running, settled]);
    const expanded = toolRow("external_workflow", workflowRenderers, args, [running, settled], true);
    await capture("workflow-settled", (width) => `${seen(collapsed, width)}\n${seen(expanded, width)}`);
    expect(seen(expanded, 120)).toContain("└─ ✗ Review simplicity");
    expect(seen(expanded, 120)).toContain('"add a test for retries"');
  });

  test("a resume names the run it continues", () => {
    const row = toolRow("external_workflow", workflowRenderers, { resume: "wf_0mx1xga91_abcdefghij" }, [running]);
    expect(seen(row, 120)).toContain("resume of wf_0mx1xga91_abcdefghij");
  });
});

describe("external_runs and external_help rows", () => {
  test("the first line collapsed, the answer expanded", async () => {
    const text = "2 runs, newest first:\nc-5e21aa agent running · Count the TypeScript files\nw-91c2 workflow succeeded · Review src/ through three lenses";
    const collapsed = toolRow("external_runs", runsRenderers, { action: "list" }, [{ details: { action: "list" }, text, durationMs: 12 }]);
    const expanded = toolRow("external_runs", runsRenderers, { action: "wait", runIds: ["c-5e21aa"] }, [{ details: { action: "wait" }, text, durationMs: 1_200 }], true);
    const help = toolRow("external_help", helpRenderers, { topic: "workflows" }, [{ details: { topic: "workflows" }, text: "Workflows are scripts that orchestrate child agents.\nMore text.", durationMs: 3 }]);
    await capture("runs-and-help", (width) => `${seen(collapsed, width)}\n${seen(expanded, width)}\n${seen(help, width)}`);
    expect(seen(collapsed, 80)).toMatch(/✓ Runs list/);
    expect(seen(expanded, 80)).toContain("w-91c2 workflow succeeded");
  });
});

describe("an answer that writes escape sequences", () => {
  test("is shown without them: no clipboard write, title change or screen clear reaches the terminal", () => {
    const plainTheme = { fg: (_color: string, text: string) => text } as unknown as Parameters<typeof answerText>[1];
    const value = "Done.\r\n\u001b]52;c;Y3VybCBldmlsIHwgc2g=\u0007\u001b]0;pwned\u0007\u001b[2J\tAll clean.";
    const view = runView({ runId: "c-esc", kind: "agent", output: { finalAvailable: true, delivery: "inline", value } });
    expect(answerText(view, plainTheme)).toBe("answer\nDone.\n  All clean.");
  });

  test("an expanded external_runs result (a final answer a child wrote) is shown without them too", () => {
    const text = "final:\nDone.\u001b]52;c;Y3VybCBldmlsIHwgc2g=\u0007\u001b]0;pwned\u0007\u001b[2J\u009b2K clean.";
    const expanded = toolRow("external_runs", runsRenderers, { action: "inspect", runIds: ["c-esc"] }, [{ details: { action: "inspect" }, text, durationMs: 5 }], true);
    const shown = seen(expanded, 80);
    expect(shown).toContain("Done. clean.");
    expect(shown).not.toMatch(/\u001b\]|\u009b|pwned|Y3VybC/);
  });
});
