/**
 * Text pi-flow did not write, drawn by its TUI views: a model's tool arguments, a rejection that
 * quotes them, a CLI child's activity (a codex shell command spans lines), an old `/flow` entry
 * read back from a session file. Pi's TUI hands each rendered line to the terminal as it is, so no
 * line may carry an escape sequence other than the theme's colors, nor a line break of its own.
 */
import { describe, expect, test } from "vitest";
import type { ChildEntry } from "../../src/contract/child-entry.ts";
import { renderFlowOutput } from "../../src/ui/flow-output.ts";
import { helpRenderers, runsRenderers } from "../../src/ui/query-renderers.ts";
import { delegateRenderers, workflowRenderers } from "../../src/ui/run-renderers.ts";
import { completionRow, runView, theme, toolRow, WIDTHS, type Update } from "./views.ts";

const CLIPBOARD = "\u001b]52;c;Y3VybCBldmlsIHwgc2g=\u0007";
const HOSTILE = `${CLIPBOARD}\u001b]0;pwned\u0007\u001b[2J\u001bc\u009b2K\u202eevil`;
/** A theme's colors (SGR) are the one escape a line may hold. */
const COLORS = /\u001b\[[0-9;]*m/g;
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

/** Every line the component draws, at every width, raw as the terminal receives it. */
function drawn(component: { render(width: number): readonly string[] }): string[] {
  return WIDTHS.flatMap((width) => component.render(width));
}

function expectInert(lines: readonly string[]): void {
  expect(lines.length).toBeGreaterThan(0);
  for (const line of lines) {
    const bare = line.replace(COLORS, "");
    expect(bare, JSON.stringify(line)).not.toMatch(CONTROLS);
    expect(bare).not.toContain("pwned");
    expect(bare).not.toContain("Y3VybC");
  }
}

describe("a model's tool arguments", () => {
  test("an external_help or external_runs row's header shows the topic and run IDs without their escapes", () => {
    const help = toolRow("external_help", helpRenderers, { topic: `x${HOSTILE}` }, [{ details: {}, text: "external_help failed (selection_invalid): Unknown topic.", isError: true }]);
    const runs = toolRow("external_runs", runsRenderers, { action: "inspect", runIds: [`ag_${HOSTILE}`] }, [{ details: {}, text: "external_runs inspect failed (request_invalid): Malformed run ID.", isError: true }]);
    for (const row of [help, runs]) {
      expectInert(drawn(row));
      row.setExpanded(true);
      expectInert(drawn(row));
    }
  });

  test("an expanded rejection that quotes the model's workflow name shows it without its escapes", () => {
    const text = `external_workflow rejected (request_invalid): "re${HOSTILE}view" is not a workflow name: use letters, digits, ".", "_" and "-", no path.`;
    const row = toolRow("external_workflow", workflowRenderers, { workflow: `re${HOSTILE}view`, description: "d" }, [{ details: { phase: "rejected" }, text, isError: true }], true);
    const lines = drawn(row);
    expectInert(lines);
    expect(lines.join("\n")).toContain("is not a workflow name");
  });

  test("an expanded result from another host (no details) shows its text without escapes", () => {
    const row = toolRow("external_delegate", delegateRenderers, { role: "explorer", description: "d" }, [{ details: undefined, text: `Done.${HOSTILE}\nSecond line.` }], true);
    const lines = drawn(row);
    expectInert(lines);
    expect(lines.join("\n")).toContain("Second line.");
  });
});

describe("a CLI child's activity that spans lines (a codex shell command)", () => {
  const activity = "running bash -lc 'cat <<EOF > notes.md\nfirst\nEOF'";
  const oneRow = /running bash -lc 'cat <<EOF > notes\.md first EOF'/;

  test("is one line in a delegate row and in a workflow's tree", () => {
    const delegate: Update = { partial: true, details: { runId: "ag_1", phase: "running", progress: { activity, usage: { turns: 1 } } } };
    const children: ChildEntry[] = [{ index: 0, runId: "ag_2", description: "Write notes", status: "running", startedAt: Date.now(), activity }];
    const workflow: Update = { partial: true, details: { runId: "wf_1", phase: "running", children } };
    for (const row of [
      toolRow("external_delegate", delegateRenderers, { role: "worker", harness: "codex", description: "Write notes" }, [delegate], true),
      toolRow("external_workflow", workflowRenderers, { workflow: "notes", description: "Notes" }, [workflow], true),
    ]) {
      const lines = drawn(row);
      expectInert(lines);
      expect(lines.some((line) => oneRow.test(line.replace(COLORS, "")))).toBe(true);
    }
  });
});

describe("a /flow entry read back from a session file", () => {
  test("written by a version that kept a child's escapes, it is drawn without them", () => {
    const entry = { data: { title: `/flow runs ag_1 tail${HOSTILE}`, lines: [`First ${HOSTILE}line.`, "Twelve\r files."] } };
    const component = renderFlowOutput(entry, { expanded: false } as Parameters<typeof renderFlowOutput>[1], theme)!;
    const lines = drawn(component);
    expectInert(lines);
    expect(lines.map((line) => line.replace(COLORS, "")).join("\n")).toMatch(/First +evil ?line\./);
  });
});

describe("a background run's completion read back from a session file (an imported one, or one edited)", () => {
  test("its run ID, kind, outcome, harness, integrity and error code are drawn without their escapes, collapsed and expanded", () => {
    const view = runView({
      runId: `ag_1${HOSTILE}`,
      kind: `agent${HOSTILE}` as "agent",
      task: { description: "Review", role: "explorer", harness: `codex${HOSTILE}` },
      state: { status: "done", outcome: `failed${HOSTILE}` as "failed", error: { code: `failed${HOSTILE}` as "failed", message: "boom" } },
      integrity: `complete${HOSTILE}` as "complete",
      output: { finalAvailable: false, delivery: `inline${HOSTILE}` as "inline", value: "Done." },
    });
    for (const expanded of [false, true]) {
      const lines = drawn(completionRow(view, expanded));
      expectInert(lines);
      expect(lines.map((line) => line.replace(COLORS, "")).join("\n")).toContain("boom");
    }
  });
});

describe("a completion read back from a session file whose fields are not the types a view has", () => {
  test("draws what is text and never throws at render time, collapsed and expanded", () => {
    const view = runView({
      runId: "ag_1",
      kind: "agent",
      task: { description: 42, role: ["x"] } as never,
      state: { status: "done", outcome: "failed", error: { code: 7, message: { a: 1 } } } as never,
      output: { finalAvailable: true, delivery: "inline", value: "Done." },
    });
    for (const expanded of [false, true]) {
      const lines = drawn(completionRow(view, expanded));
      expectInert(lines);
      expect(lines.map((line) => line.replace(COLORS, "")).join("\n")).toContain("Background delegate");
    }
  });
});

describe("a delegate row read back from a session file (an imported one, or one edited)", () => {
  test("its run ID, in the background or running, is drawn without its escapes", () => {
    const runId = `ag_1${HOSTILE}`;
    const updates: Update[][] = [
      [{ details: { phase: "accepted", run: runView({ runId, kind: "agent" }) }, text: "accepted" }],
      [{ partial: true, details: { runId, phase: "running" } }],
    ];
    for (const update of updates) {
      const lines = drawn(toolRow("external_delegate", delegateRenderers, { role: "explorer", description: "d" }, update, true));
      expectInert(lines);
    }
  });
});

describe("a workflow row read back from a session file whose children's activity and last output are no text", () => {
  test("draws each child's line and never throws at render time", () => {
    const children = [
      { index: 0, runId: "ag_2", description: "Write notes", status: "running", startedAt: 0, activity: 7, lastOutput: { text: "x" } },
      { index: 1, runId: "ag_3", description: "Read notes", status: "succeeded", startedAt: 0, lastOutput: ["a"] },
    ];
    const update: Update = { partial: true, details: { runId: "wf_1", phase: "running", children } };
    const lines = drawn(toolRow("external_workflow", workflowRenderers, { workflow: "notes", description: "Notes" }, [update], true));
    expectInert(lines);
    const text = lines.map((line) => line.replace(COLORS, "")).join("\n");
    expect(text).toContain("Write notes");
    expect(text).toContain("Read notes");
  });
});

describe("a model's call whose arguments have the wrong types (Pi draws a call before validating it)", () => {
  test("each row draws its label and the fields that are strings, and never throws at render time", () => {
    const rejected: Update = { details: { phase: "rejected" }, text: "Validation failed for tool arguments.", isError: true };
    const cases: [string, object, Record<string, unknown>, RegExp][] = [
      ["external_runs", runsRenderers, { action: "inspect", runIds: "ag_x" }, /✗ Runs inspect/],
      ["external_runs", runsRenderers, { action: 5, runIds: ["ag_y", 7, {}] }, /✗ Runs ag_y/],
      ["external_help", helpRenderers, { topic: { a: 1 }, tool: "external_runs" }, /✗ Help external_runs/],
      ["external_delegate", delegateRenderers, { role: { a: 1 }, description: 42 }, /✗ Delegate/],
      ["external_delegate", delegateRenderers, { role: "worker", harness: 7, description: ["a"] }, /✗ Delegate worker/],
      ["external_workflow", workflowRenderers, { workflow: 12, description: null, script: "return 1;" }, /✗ Workflow inline/],
    ];
    for (const [tool, renderers, args, header] of cases) {
      for (const expanded of [false, true]) {
        const row = toolRow(tool, renderers, args, [rejected], expanded);
        const lines = drawn(row);
        expect(lines.map((line) => line.replace(COLORS, "")).join("\n"), JSON.stringify(args)).toMatch(header);
      }
    }
  });
});
