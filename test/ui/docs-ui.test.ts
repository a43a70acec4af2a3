import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, test } from "vitest";
import { PROJECT_ROOT } from "../support/pi-session.ts";
import { captureSection } from "./doc-captures.ts";

// docs/ui.md shows the views as the renderer tests capture them; this keeps the page true.
const page = readFileSync(join(PROJECT_ROOT, "docs/ui.md"), "utf8");
const blocks = [...page.matchAll(/```text capture=([\w-]+) width=(\d+)\n([\s\S]*?)```/g)].map((match) => ({ name: match[1]!, width: Number(match[2]), text: match[3]!.replace(/^\n+|\s+$/g, "") }));

test("docs/ui.md has captures", () => {
  expect(blocks.length).toBeGreaterThanOrEqual(8);
});

test.each(blocks)("docs/ui.md $name at width $width is what the renderer draws", ({ name, width, text }) => {
  expect(text).toBe(captureSection(name, width));
});
