// The docs name the modules a rule lives in (docs/contract.md's table, docs/architecture.md): a
// moved or renamed file must take its mentions along, and the process-wide stores are all listed.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { PROCESS_GLOBALS } from "../../runtime/process-global.ts";
import { PROJECT_ROOT } from "../support/pi-session.ts";

const pages = ["README.md", ...readdirSync(join(PROJECT_ROOT, "docs")).map((name) => `docs/${name}`)];
const text = (page: string) => readFileSync(join(PROJECT_ROOT, page), "utf8");

it("every project path the docs name in code spans exists", () => {
  const named = pages.flatMap((page) => [...text(page).matchAll(/`((?:src|runtime|helpers|test|bench)\/[^`\s*]*)`/g)].map((match) => `${page}: ${match[1]}`));
  expect(named.length).toBeGreaterThan(20);
  expect(named.filter((entry) => !existsSync(join(PROJECT_ROOT, entry.split(": ")[1]!)))).toEqual([]);
});

// A module named by its file name alone (`launch-child.ts`) must still be a file of the project:
// a rename that leaves such a mention behind is caught like a stale path.
const SKIPPED = new Set(["node_modules", ".git", "test-output"]);
function projectFileNames(dir: string, into = new Set<string>()): Set<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (SKIPPED.has(entry.name)) continue;
    if (entry.isDirectory()) projectFileNames(join(dir, entry.name), into);
    else into.add(entry.name);
  }
  return into;
}

it("every module the docs name by its bare file name exists in the project", () => {
  const named = pages.flatMap((page) => [...text(page).matchAll(/`([A-Za-z0-9_][A-Za-z0-9_.-]*\.(?:ts|js|mjs))`/g)].map((match) => ({ page, name: match[1]! })));
  expect(named.length).toBeGreaterThan(20);
  const files = projectFileNames(PROJECT_ROOT);
  expect(named.filter(({ name }) => !files.has(name)).map(({ page, name }) => `${page}: ${name}`)).toEqual([]);
});

it("docs/architecture.md lists every process-wide store", () => {
  const architecture = text("docs/architecture.md");
  expect(Object.keys(PROCESS_GLOBALS).filter((key) => !architecture.includes(`\`${key}\``))).toEqual([]);
});
