// The path of one agent() call, as docs/architecture.md draws it: each file is one step, entered
// once: from one step only, and no file imports a step before it (a return trip along the path). The
// option check asks the contract's branch rule, not the child wing it launches through later.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { importEdges } from "../support/import-graph.ts";
import { PROJECT_ROOT } from "../support/pi-session.ts";

const PATH = [
  "runtime/bridge.ts",
  "src/orchestrator/workflow/start.ts",
  "src/orchestrator/workflow/children.ts",
  "src/orchestrator/child/prepare-child.ts",
  "src/harnesses/registry.ts",
  "src/orchestrator/child/launch-child.ts",
  "src/orchestrator/lifecycle/start-run.ts",
  "src/harnesses/create-harness.ts",
];

it("each step of an agent() call is drawn in docs/architecture.md and imports no step before it", () => {
  const picture = readFileSync(join(PROJECT_ROOT, "docs/architecture.md"), "utf8");
  const short = (file: string) => file.replace(/^src\/orchestrator\//, "").replace(/^src\//, "");
  expect(PATH.filter((file) => !picture.includes(short(file)))).toEqual([]);
  const edges = importEdges(["src", "runtime"]);
  const back = edges.filter(({ from, to }) => PATH.includes(from) && PATH.includes(to) && PATH.indexOf(to) < PATH.indexOf(from));
  expect(back).toEqual([]);
});

it("each step of an agent() call is entered from one step only: no file of the path is visited twice", () => {
  const edges = importEdges(["src", "runtime"]);
  const enteredFrom = PATH.map((file) => ({ file, from: [...new Set(edges.filter(({ from, to }) => to === file && PATH.includes(from)).map(({ from }) => from))] }));
  expect(enteredFrom.filter(({ from }) => from.length > 1)).toEqual([]);
});

it("agent()'s option check takes only types from the child wing", () => {
  const text = readFileSync(join(PROJECT_ROOT, "src/orchestrator/workflow/agent-options.ts"), "utf8");
  expect(text.match(/^import \{[^}]*\} from "\.\.\/child\/.*$/gm) ?? []).toEqual([]);
});
