import { describe, expect, it } from "vitest";
import { STARTS_PER_TURN } from "../../runtime/queue.ts";
import { run, value } from "./support.ts";

const host = {
  tools: { search_issues: async () => ({ total: 0 }), close_issue: async () => "closed" },
  toolSchemas: {
    search_issues: {
      description: "Search the issue tracker.\nMore text.",
      input: { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
      output: { type: "object", properties: { total: { type: "integer" } }, required: ["total"] },
    },
    close_issue: { description: "Close one issue.", input: { type: "object", properties: { id: { type: "integer" } } } },
  },
};

describe("describeTool() and searchTools() in the runtime", () => {
  it("answer from the host's declarations, without counting as tool calls or emitting events", async () => {
    const { result, events } = await run(
      `const described = await describeTool("search_issues");
       const found = await searchTools("close an issue");
       const byArgument = await searchTools("query", { limit: 5 });
       return { described, found: found.map((m) => m.name), first: found[0].description, byArgument: byArgument.map((m) => m.name), missing: await describeTool("delete_repo") };`,
      { host, limits: { toolCalls: 1 } },
    );
    const answer = value(result) as { described: string; found: string[]; first: string; byArgument: string[]; missing?: string };
    expect(answer.described).toBe(
      "Search the issue tracker.\nMore text.\n\nworkflow tool declaration:\n```ts\ninterface SearchIssuesInput {\n  query: string;\n}\n\ninterface SearchIssuesOutput {\n  total: number;\n}\n\ndeclare const tools: {\n  /** Search the issue tracker. */\n  search_issues(args: SearchIssuesInput): Promise<SearchIssuesOutput>;\n};\n```",
    );
    expect(answer.found[0]).toBe("close_issue");
    expect(answer.first).toContain("close_issue(args: CloseIssueInput): Promise<string>;");
    expect(answer.byArgument).toEqual(["search_issues"]);
    expect(answer).not.toHaveProperty("missing");
    expect(events).toEqual([]);
  });

  it("answer a flood of calls a few at a time, as tools.* calls start: the host's thread and heap never hold them all at once", async () => {
    // Each answer reads the host's schemas: count the reads in each turn of the host's event loop.
    let inTurn = 0;
    let most = 0;
    const toolSchemas = new Proxy(host.toolSchemas, {
      get(target, key) {
        if (inTurn++ === 0) setImmediate(() => (inTurn = 0));
        most = Math.max(most, inTurn);
        return Reflect.get(target, key);
      },
    });
    const { result } = await run(
      `const all = [];
       for (let i = 0; i < 200; i++) all.push(i % 2 === 0 ? describeTool("close_issue") : searchTools("close issue", { limit: 1 }));
       return (await Promise.all(all)).length;`,
      { host: { ...host, toolSchemas } },
    );
    expect(value(result)).toBe(200);
    // Calls start STARTS_PER_TURN at a time, each reading a schema; the queue's next turn and this
    // count's reset can share a turn, and the first search indexes both tools. Answered all at once,
    // the 200 calls read the schemas 200 times in one turn.
    expect(most).toBeLessThanOrEqual(2 * STARTS_PER_TURN + 2);
  });

  it("refuse a searchTools() query over 4096 characters before it reaches the host, and rank one at the bound", async () => {
    const { result } = await run(
      `const words = "close issue ".repeat(300);
       const out = [];
       try { await searchTools(words + "x".repeat(4097 - words.length)); } catch (error) { out.push(error.name + ": " + error.message); }
       const atBound = await searchTools(words + "x".repeat(4096 - words.length), { limit: 1 });
       out.push(atBound.map((match) => match.name));
       return out;`,
      { host },
    );
    expect(value(result)).toEqual(["TypeError: searchTools(query): the query has 4097 characters, at most 4096: search with a few words", ["close_issue"]]);
  });

  it("refuse arguments that are not a name or a query", async () => {
    const { result } = await run(
      `const out = [];
       for (const call of [() => describeTool(1), () => searchTools(null), () => searchTools("x", { limit: 1.5 })]) {
         try { await call(); } catch (error) { out.push(error.name + ": " + error.message); }
       }
       return out;`,
      { host },
    );
    expect(value(result)).toEqual([
      "TypeError: describeTool(name): name must be a string",
      "TypeError: searchTools(query): query must be a string",
      "TypeError: searchTools(query, { limit }): limit must be a positive integer",
    ]);
  });

  it("a tool whose schema changed between runs is described from its new schema, though declarations are kept across runs", async () => {
    const describe = async (input: { type: string; properties: Record<string, { type: string }> }) => {
      const { result } = await run(`return await describeTool("close_issue");`, { host: { tools: host.tools, toolSchemas: { close_issue: { description: "Close one issue.", input } } } });
      return value(result) as string;
    };
    const byId = { type: "object", properties: { id: { type: "integer" } } };
    const bySlug = { type: "object", properties: { slug: { type: "string" } } };
    expect(await describe(byId)).toContain("id?: number;");
    expect(await describe(bySlug)).toContain("slug?: string;");
    expect(await describe(bySlug)).not.toContain("id?: number;");
    expect(await describe(byId)).toContain("id?: number;");
  });
});
