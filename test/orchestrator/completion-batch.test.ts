import { describe, expect, test } from "vitest";
import type { RunView } from "../../src/contract/run-schema.ts";
import { CompletionBatch, completionWindow, DEFAULT_COMPLETION_WINDOW_MS } from "../../src/orchestrator/session/completion-batch.ts";
import { ResultOwnership } from "../../src/orchestrator/session/ownership.ts";

const view = (runId: string) => ({ runId }) as RunView;

/** Ownership wired to a batch as a session wires them, with a parent whose idleness the test sets. */
function session(windowMs = 0) {
  const batch = new CompletionBatch(windowMs);
  const ownership = new ResultOwnership((send) => batch.enqueue(send));
  const messages: string[][] = [];
  let idle = true;
  let sent!: () => void;
  let nextMessage = new Promise<void>((resolve) => (sent = resolve));
  batch.bind({
    send: (views) => {
      messages.push(views.map((v) => v.runId));
      sent();
      nextMessage = new Promise<void>((resolve) => (sent = resolve));
    },
    idle: () => idle,
  });
  const background = (runId: string) => ownership.track(runId, () => batch.deliver(view(runId)));
  return {
    batch,
    ownership,
    messages,
    background,
    setIdle: (value: boolean) => (idle = value),
    nextMessage: () => nextMessage,
  };
}

describe("completion batches", () => {
  test("completions that settle close together go out as one message", async () => {
    const s = session();
    for (const id of ["a", "b", "c"]) s.background(id);
    for (const id of ["a", "b", "c"]) s.ownership.settled(id);
    await s.nextMessage();
    expect(s.messages).toEqual([["a", "b", "c"]]);
  });

  test("while the parent is busy, every completion waits for it to settle, then all go out in one message", () => {
    const s = session(60_000); // the window never ends within this test: only the parent's settling sends
    s.setIdle(false);
    for (let i = 0; i < 100; i++) s.background(`r${i}`);
    for (let i = 0; i < 100; i++) s.ownership.settled(`r${i}`);
    expect(s.messages).toEqual([]);
    s.setIdle(true);
    s.batch.parentSettled();
    expect(s.messages).toHaveLength(1);
    expect(s.messages[0]).toEqual(Array.from({ length: 100 }, (_, i) => `r${i}`));
    s.batch.parentSettled();
    expect(s.messages).toHaveLength(1);
  });

  test("ownership is checked when the batch goes out: a result a wait claimed meanwhile is left out, once delivered by the wait", () => {
    const s = session(60_000);
    s.background("a");
    s.background("b");
    s.ownership.settled("a");
    s.ownership.settled("b");
    const claim = s.ownership.claim("b"); // a wait on b starts after b's notice was queued
    claim.observed();
    s.batch.parentSettled();
    expect(s.messages).toEqual([["a"]]);
  });

  test("a wait that gives up before the batch goes out hands the result back: it is in the batch, once", () => {
    const s = session(60_000);
    s.background("a");
    const claim = s.ownership.claim("a");
    s.ownership.settled("a");
    claim.release();
    s.batch.parentSettled();
    s.batch.parentSettled();
    expect(s.messages).toEqual([["a"]]);
  });

  test("with no publisher bound, the batch waits for the next one and loses nothing", async () => {
    const s = session();
    s.batch.unbind();
    s.background("a");
    s.ownership.settled("a");
    s.batch.parentSettled();
    expect(s.messages).toEqual([]);
    const later: string[][] = [];
    const delivered = new Promise<void>((resolve) =>
      s.batch.bind({ send: (views) => (later.push(views.map((v) => v.runId)), resolve()), idle: () => true }),
    );
    await delivered;
    expect(later).toEqual([["a"]]);
  });

  test("a parent whose session is gone keeps the batch for a publisher that binds again", async () => {
    const batch = new CompletionBatch(0);
    let throws = true;
    let asked!: () => void;
    const askedIdle = new Promise<void>((resolve) => (asked = resolve));
    const got: string[][] = [];
    let resolveSent!: () => void;
    const sent = new Promise<void>((resolve) => (resolveSent = resolve));
    batch.bind({
      send: (views) => (got.push(views.map((v) => v.runId)), resolveSent()),
      idle: () => {
        if (throws) {
          asked();
          throw new Error("stale context");
        }
        return true;
      },
    });
    batch.enqueue(() => batch.deliver(view("a")));
    await askedIdle; // the window ended and found the session gone
    expect(got).toEqual([]);
    expect(batch.size).toBe(1);
    throws = false;
    batch.parentSettled();
    await sent;
    expect(got).toEqual([["a"]]);
  });

  test("the window comes from PI_FLOW_COMPLETION_WINDOW_MS; anything invalid keeps the default", () => {
    expect(completionWindow({})).toBe(DEFAULT_COMPLETION_WINDOW_MS);
    expect(completionWindow({ PI_FLOW_COMPLETION_WINDOW_MS: "0" })).toBe(0);
    expect(completionWindow({ PI_FLOW_COMPLETION_WINDOW_MS: "40" })).toBe(40);
    expect(completionWindow({ PI_FLOW_COMPLETION_WINDOW_MS: "-1" })).toBe(DEFAULT_COMPLETION_WINDOW_MS);
    expect(completionWindow({ PI_FLOW_COMPLETION_WINDOW_MS: "soon" })).toBe(DEFAULT_COMPLETION_WINDOW_MS);
  });
});
