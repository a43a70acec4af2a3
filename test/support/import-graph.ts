// The project's own import graph, read from its sources: which file imports which. Relative
// specifiers only (packages are not part of the layout), type-only imports included: a circle of
// types is still a circle a reader has to walk.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { PROJECT_ROOT } from "./pi-session.ts";

const SPECIFIER = /(?:\bfrom\s*|(\bimport\s*\(\s*)|^\s*import\s+)["']([^"']+)["']/gm;
const SOURCE = /\.(?:ts|js|mjs)$/;

function sourceFiles(dir: string): string[] {
  return readdirSync(join(PROJECT_ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "worker-js" || entry.name === "node_modules" ? [] : sourceFiles(path);
    return SOURCE.test(entry.name) && !entry.name.endsWith(".d.ts") ? [path] : [];
  });
}

/** One import: `lazy` when it is an `import()` that loads its module only when the code runs. */
export interface ImportEdge {
  from: string;
  to: string;
  lazy: boolean;
}

/** Every import between project files under `roots` (paths from the project root). */
export function importEdges(roots: readonly string[]): ImportEdge[] {
  return roots.flatMap((root) => (SOURCE.test(root) ? [root] : sourceFiles(root))).flatMap((from) =>
    [...readFileSync(join(PROJECT_ROOT, from), "utf8").matchAll(SPECIFIER)]
      .filter((match) => match[2]!.startsWith("."))
      .map((match) => ({ from, to: relative(PROJECT_ROOT, resolve(PROJECT_ROOT, dirname(from), match[2]!)), lazy: match[1] !== undefined })),
  );
}

/** Every project file under `roots` with the project files it imports, lazily or not. */
export function importGraph(roots: readonly string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of roots.flatMap((root) => (SOURCE.test(root) ? [root] : sourceFiles(root)))) graph.set(file, []);
  for (const { from, to } of importEdges(roots)) if (!graph.get(from)!.includes(to)) graph.get(from)!.push(to);
  return graph;
}

/** The import circles among the graph's files, each as the path that closes it. */
export function importCircles(graph: Map<string, string[]>): string[][] {
  const circles: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const visit = (file: string): void => {
    state.set(file, "open");
    path.push(file);
    for (const target of graph.get(file) ?? []) {
      if (!graph.has(target)) continue;
      if (state.get(target) === "open") circles.push([...path.slice(path.indexOf(target)), target]);
      else if (!state.has(target)) visit(target);
    }
    path.pop();
    state.set(file, "done");
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return circles;
}
