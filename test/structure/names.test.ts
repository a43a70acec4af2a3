// Names that say what is inside: no module is just `run.ts` (each says what it runs), and the
// parent-conversation snapshot is not a folder named after every other kind of context.
import { existsSync } from "node:fs";
import { basename, join } from "node:path";
import { expect, it } from "vitest";
import { importGraph } from "../support/import-graph.ts";
import { PROJECT_ROOT } from "../support/pi-session.ts";

it("no source file is named run.ts, and src/context/ is src/parent-context/", () => {
  const files = [...importGraph(["src", "runtime", "helpers", "index.ts"]).keys()];
  expect(files.filter((file) => basename(file) === "run.ts")).toEqual([]);
  expect(existsSync(join(PROJECT_ROOT, "src/context"))).toBe(false);
  expect(existsSync(join(PROJECT_ROOT, "src/parent-context/snapshot.ts"))).toBe(true);
});
