/** What the tests of pasted secrets share (redact-pasted*.test.ts): fake values, and how a secret is found gone or kept. */
import { expect } from "vitest";
import { redactText } from "../../src/runs/index.ts";

// Built from pieces so the source file itself does not look like it leaks credentials.
export const alnum = (n: number) => "aB3dE5gH7jK9mN1pQ2rS4tU6vW8xY0z".repeat(8).slice(0, n);
export const hex = (n: number) => "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08".repeat(2).slice(0, n);

/** A secret leaks when any piece of 8 characters of it survives (the whole of a shorter one). */
export function leaks(redacted: string, secret: string): boolean {
  const width = Math.min(8, secret.length);
  for (let at = 0; at + width <= secret.length; at++) if (redacted.includes(secret.slice(at, at + width))) return true;
  return false;
}

/** `secret` goes from `text`, as written and inside a JSON string, and each of `keep` stays. */
export function expectGone(text: string, secret: string, keep: readonly string[] = []): void {
  const plain = redactText(text).text;
  expect(leaks(plain, secret), `${JSON.stringify(text)} -> ${JSON.stringify(plain)}`).toBe(false);
  for (const part of keep) expect(plain, JSON.stringify(text)).toContain(part);
  const inJson = redactText(JSON.stringify({ content: text })).text;
  const back = (JSON.parse(inJson) as { content: string }).content;
  expect(leaks(back, secret), `in JSON: ${inJson}`).toBe(false);
  for (const part of keep) expect(back).toContain(part);
}

export function expectKept(text: string): void {
  expect(redactText(text).text).toBe(text);
}
