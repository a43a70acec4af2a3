import { describe, expect, it } from "vitest";
import { renderContext } from "../../src/parent-context/modes.ts";
import type { SnapshotMessage } from "../../src/parent-context/snapshot.ts";
import { redactText, rememberSharedHead } from "../../src/runs/index.ts";
import { buildInnocentCases } from "./fixtures/innocent-corpus.ts";
import { buildSecretCases } from "./fixtures/secret-corpus.ts";

/**
 * A `full` child's prompt is its parent's conversation and then its task; the conversation is
 * redacted once per call (rememberSharedHead) and each child's task on its own. These tests hold
 * that to the rule it relies on: redacting the parts gives what redacting the whole prompt gives,
 * for every text of both corpora, at the end of the conversation and in the task.
 */

const FILLER = "The build is green and the review comments are answered. ".repeat(80);
const TEXTS = [...buildSecretCases().map((c) => c.text), ...buildInnocentCases().map((c) => c.text)];

/** A rendered parent conversation, as prepare-child builds it, whose last message is `last`. */
function conversation(last: string, n: number): string {
  const messages: SnapshotMessage[] = [
    { role: "user", text: `Conversation ${n}. ${FILLER}` },
    { role: "assistant", text: last },
  ];
  return renderContext(messages, "2026-12-03T02:00:00.000Z");
}

const prompt = (context: string, task: string) => `${context}\n\n<task>\n${task}\n</task>`;

describe("a prompt that begins with a shared parent conversation", () => {
  it("is redacted exactly as the whole prompt is, for every corpus text at the join", () => {
    const differing: string[] = [];
    TEXTS.forEach((text, n) => {
      const context = conversation(text, n);
      const whole = [prompt(context, text), prompt(context, "Summarise the review.")].map((p) => redactText(p).text);
      rememberSharedHead(context);
      const parts = [prompt(context, text), prompt(context, "Summarise the review.")].map((p) => redactText(p).text);
      if (parts[0] !== whole[0] || parts[1] !== whole[1]) differing.push(text.slice(0, 80));
    });
    expect(TEXTS.length).toBeGreaterThan(400);
    expect(differing).toEqual([]);
  });

  it("keeps a private key with no end redacted through the task, as the whole prompt has it", () => {
    const key = `-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACDk3Ww9Y5lqM0vF2t`;
    const context = conversation(`Here is the key file, cut short:\n${key}`, -1);
    const task = "Check whether QyNTUxOQAAACDk3Ww9Y5lqM0vF2t is still valid.";
    const whole = redactText(prompt(context, task)).text;
    rememberSharedHead(context);
    const parts = redactText(prompt(context, task)).text;
    expect(parts).toBe(whole);
    expect(parts).not.toContain("QyNTUxOQAAACDk3Ww9Y5lqM0vF2t");
    expect(parts).not.toContain("<task>");
  });

  it("redacts each child's own task, and the conversation once for all of them", () => {
    const context = conversation("Deploy with STRIPE_SECRET_KEY=sk_live_4eC39HqLyjWDarjtT1zdp7dc today.", -2);
    rememberSharedHead(context);
    const tasks = ["Review the deploy.", "Rotate sk_live_51HxQ2mKQ9bZa8YtRvN3cD7eF0gH1jK2l before lunch."];
    const [first, second] = tasks.map((task) => redactText(prompt(context, task)).text);
    expect(first).not.toContain("sk_live_4eC39HqLyjWDarjtT1zdp7dc");
    expect(first).toContain("<task>\nReview the deploy.\n</task>");
    expect(second).not.toContain("sk_live_51HxQ2mKQ9bZa8YtRvN3cD7eF0gH1jK2l");
    expect(second).toContain("Rotate [REDACTED] before lunch.");
  });
});
