// The docs name the modules a rule lives in (docs/contract.md's table, docs/architecture.md): a
// moved or renamed file must take its mentions along, and the process-wide stores are all listed.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { PROCESS_GLOBALS } from "../../src/process/global.ts";
import { PROJECT_ROOT } from "../support/pi-session.ts";

const pages = ["README.md", ...readdirSync(join(PROJECT_ROOT, "docs")).map((name) => `docs/${name}`)];
const text = (page: string) => readFileSync(join(PROJECT_ROOT, page), "utf8");

it("every project path the docs name in code spans exists", () => {
  const named = pages.flatMap((page) => [...text(page).matchAll(/`((?:src|runtime|helpers|test|bench)\/[^`\s*]*)`/g)].map((match) => `${page}: ${match[1]}`));
  expect(named.length).toBeGreaterThan(20);
  expect(named.filter((entry) => !existsSync(join(PROJECT_ROOT, entry.split(": ")[1]!)))).toEqual([]);
});

it("docs/architecture.md lists every process-wide store", () => {
  const architecture = text("docs/architecture.md");
  expect(Object.keys(PROCESS_GLOBALS).filter((key) => !architecture.includes(`\`${key}\``))).toEqual([]);
});
