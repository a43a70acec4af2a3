// The layout a newcomer relies on: arrows run one way (contract → runs → harnesses → orchestrator
// → ui and help → tools and commands → the entry → the flow command, which hosts it), each orchestrator wing,
// runs/, harnesses/ and ui/ are entered through their index.ts, and no file reaches itself again
// through its imports.
import { describe, expect, it } from "vitest";
import { importCircles, importEdges, importGraph } from "../support/import-graph.ts";

const ROOTS = ["src", "runtime", "helpers", "index.ts"];
const graph = importGraph(ROOTS);
const edges = importEdges(ROOTS);

/** Each top folder of src/ and the floor it stands on; a file may import its own floor and below. */
const FLOOR: Record<string, number> = {
  contract: 0,
  runs: 1,
  trust: 1,
  "parent-context": 1,
  harnesses: 2,
  isolation: 2,
  report: 2,
  // Between the harnesses they wrap and the orchestrator that calls them.
  backends: 2.5,
  telemetry: 2.5,
  orchestrator: 3,
  help: 4,
  ui: 4,
  tools: 5,
  commands: 5,
  // The entry registers pi-flow in a Pi session; the flow command hosts it in a headless one.
  "index.ts": 6,
  "command-line": 7,
};
const WINGS = ["lifecycle", "session", "child", "workflow"];

const folderOf = (file: string): string | undefined => (file.startsWith("src/") ? file.split("/")[1] : undefined);

describe("the import graph", () => {
  it("has no circle", () => {
    expect(importCircles(graph)).toEqual([]);
  });

  it("every src/ folder has a floor, and no import runs up to a higher floor or across to a sibling front door", () => {
    const folders = new Set([...graph.keys()].map(folderOf).filter((folder) => folder !== undefined));
    expect([...folders].filter((folder) => !(folder in FLOOR))).toEqual([]);
    const upward = edges.filter(({ from, to }) => {
      const [a, b] = [folderOf(from), folderOf(to)];
      return a !== undefined && b !== undefined && a !== b && FLOOR[b]! >= FLOOR[a]!;
    });
    expect(upward).toEqual([]);
  });

  it("runtime/ and helpers/ import nothing from src/", () => {
    expect(edges.filter(({ from, to }) => /^(runtime|helpers)\//.test(from) && to.startsWith("src/"))).toEqual([]);
  });

  it("an orchestrator wing is entered through its index.ts (a lazy import() may name the one module it loads), and the wings' arrows make no circle", () => {
    const wingOf = (file: string) => /^src\/orchestrator\/([^/]+)\//.exec(file)?.[1];
    const sideDoors = edges.filter(({ from, to, lazy }) => !lazy && wingOf(to) !== undefined && wingOf(from) !== wingOf(to) && !WINGS.some((wing) => to === `src/orchestrator/${wing}/index.ts`));
    expect(sideDoors).toEqual([]);
    const wingGraph = new Map(WINGS.map((wing) => [wing, [...new Set(edges.filter(({ from, to }) => wingOf(from) === wing && wingOf(to) !== undefined && wingOf(to) !== wing).map(({ to }) => wingOf(to)!))]]));
    expect(importCircles(wingGraph)).toEqual([]);
    expect([...new Set([...graph.keys()].map(wingOf).filter((wing) => wing !== undefined))].sort()).toEqual([...WINGS].sort());
  });

  it.each(["runs", "harnesses", "ui"])("%s/ is entered from outside only through its front door, its index.ts", (folder) => {
    const inside = `src/${folder}/`;
    const sideDoors = edges.filter(({ from, to }) => to.startsWith(inside) && !from.startsWith(inside) && to !== `${inside}index.ts`);
    expect(sideDoors).toEqual([]);
  });
});
