// What a worktree child's run is told changed in the git folder every worktree shares
// (src/isolation/git-controls.ts): real files, each kind of change, and a config grown huge.
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { changedControls, gitControls } from "../../src/isolation/git-controls.ts";

const dir = mkdtempSync(join(tmpdir(), "git-controls-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("a changed config, a hook added and attributes removed are each named; an unchanged folder names nothing", async () => {
  mkdirSync(join(dir, "hooks"));
  mkdirSync(join(dir, "info"));
  writeFileSync(join(dir, "config"), "[core]\n\tbare = false\n");
  writeFileSync(join(dir, "info/attributes"), "* -text\n");
  const before = await gitControls(dir);
  expect(changedControls(before, await gitControls(dir))).toEqual([]);
  // The same size: only the contents differ.
  writeFileSync(join(dir, "config"), "[core]\n\tbare = fals3\n");
  writeFileSync(join(dir, "hooks/post-checkout"), "#!/bin/sh\n", { mode: 0o755 });
  rmSync(join(dir, "info/attributes"));
  expect(changedControls(before, await gitControls(dir))).toEqual(["config", "hooks/post-checkout", "info/attributes"]);
});

test("a config a child grew past 1 MiB is noticed without being read, and so is its next change", async () => {
  writeFileSync(join(dir, "config"), `[alias]\n${"\tx = !true\n".repeat(120_000)}`);
  const grown = await gitControls(dir);
  expect(grown.get("config")).toMatch(/^\d+:\d+$/); // size and time, not a hash of its contents
  appendFileSync(join(dir, "config"), "[core]\n\thooksPath = /tmp/elsewhere\n");
  expect(changedControls(grown, await gitControls(dir))).toEqual(["config"]);
});

test("a hooks folder a child filled with thousands of files is named as one entry, without a stat of each", async () => {
  const before = await gitControls(dir);
  for (let i = 0; i < 300; i++) writeFileSync(join(dir, "hooks", `flood-${i}`), "");
  const after = await gitControls(dir);
  expect([...after.keys()].filter((name) => name.startsWith("hooks/"))).toEqual(["hooks/"]);
  expect(changedControls(before, after)).toContain("hooks/");
});
