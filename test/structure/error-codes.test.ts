// A Node error's code is read one way, runs/fsio.ts's errorCode(): a cast to ErrnoException or to
// `{ code }`, or a hand-written `"code" in error`, reads undefined as a code and hides what was thrown.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { importGraph } from "../support/import-graph.ts";
import { PROJECT_ROOT } from "../support/pi-session.ts";

it("no source file but runs/fsio.ts reads an error's code by hand", () => {
  const files = [...importGraph(["src", "runtime", "helpers", "index.ts"]).keys()];
  expect(files).toContain("src/runs/fsio.ts");
  const byHand = files.filter((file) => file !== "src/runs/fsio.ts" && /ErrnoException|"code" in error|as \{ ?code\b/.test(readFileSync(join(PROJECT_ROOT, file), "utf8")));
  expect(byHand).toEqual([]);
});
