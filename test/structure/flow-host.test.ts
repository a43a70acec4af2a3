// FlowHost keeps only what needs the extension's Pi API, its closed state or its bound settings,
// and docs/architecture.md says which members and why: a member added without a reason there fails.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { PROJECT_ROOT } from "../support/pi-session.ts";

const read = (path: string) => readFileSync(join(PROJECT_ROOT, path), "utf8");

it("every public member of FlowHost is a row of docs/architecture.md's table, and every row a member", () => {
  const source = read("src/orchestrator/session/flow-host.ts");
  const body = source.slice(source.indexOf("export class FlowHost"), source.indexOf("\n}\n", source.indexOf("export class FlowHost")));
  const members = [...body.matchAll(/^ {2}(?:async |get )?([a-zA-Z]\w*)\(/gm)].map((match) => match[1]!).filter((name) => name !== "constructor");
  const docs = read("docs/architecture.md");
  const table = docs.slice(docs.indexOf("### What `FlowHost` holds"), docs.indexOf("## Seams"));
  const rows = [...table.matchAll(/^\| ([^|]+) \|/gm)].slice(2).flatMap((match) => [...match[1]!.matchAll(/`(\w+)`/g)].map((name) => name[1]!));
  expect(members.length).toBeGreaterThan(0);
  expect([...rows].sort()).toEqual([...members].sort());
});
