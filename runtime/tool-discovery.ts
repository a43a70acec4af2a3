// describeTool() and searchTools() inside a script: the declarations of the tools this workflow
// may call, in the shapes Pi's codemode gives its scripts. describeTool(name) resolves to the
// tool's description and TypeScript declaration (or undefined); searchTools(query, { limit })
// ranks the tools by BM25 over their names, descriptions and argument names and resolves to
// `{ name, description }[]`, each description being what describeTool returns.
import { describeToolText } from "./schema-types.ts";
import type { ToolSchema, WorkflowHost } from "./types.ts";

const K1 = 1.2;
const B = 0.75;

const terms = (text: string): string[] =>
  text
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((term) => term.length > 0);

/** The words a tool is found by: its name (twice, names matter most), description and argument names. */
function documentTerms(name: string, schema: ToolSchema | undefined): string[] {
  const input = schema?.input;
  const properties = input !== null && typeof input === "object" && !Array.isArray(input) ? input.properties : undefined;
  const argumentNames = properties !== null && typeof properties === "object" && !Array.isArray(properties) ? Object.keys(properties) : [];
  return [...terms(name), ...terms(name), ...terms(schema?.description ?? ""), ...argumentNames.flatMap(terms)];
}

/** BM25 scores of each document for the query; documents scoring 0 are left out. */
function rank(query: string, documents: ReadonlyArray<{ name: string; terms: string[] }>): string[] {
  const wanted = [...new Set(terms(query))];
  const average = documents.reduce((sum, document) => sum + document.terms.length, 0) / Math.max(1, documents.length);
  const scored = documents.map((document) => {
    let score = 0;
    for (const term of wanted) {
      const frequency = document.terms.filter((candidate) => candidate === term).length;
      if (frequency === 0) continue;
      const containing = documents.filter((other) => other.terms.includes(term)).length;
      const idf = Math.log(1 + (documents.length - containing + 0.5) / (containing + 0.5));
      score += (idf * frequency * (K1 + 1)) / (frequency + K1 * (1 - B + (B * document.terms.length) / Math.max(1, average)));
    }
    return { name: document.name, score };
  });
  return scored
    .filter((entry) => entry.score > 0)
    .sort((a, b) => b.score - a.score || a.name.localeCompare(b.name))
    .map((entry) => entry.name);
}

export class ToolDiscovery {
  private readonly host: WorkflowHost;
  private readonly described = new Map<string, Promise<string>>();

  constructor(host: WorkflowHost) {
    this.host = host;
  }

  /** Only the tools this workflow may call are described or found. */
  private callable(): string[] {
    return Object.keys(this.host.tools ?? {}).sort();
  }

  describe(name: string): Promise<string | undefined> {
    if (!this.callable().includes(name)) return Promise.resolve(undefined);
    const schema = this.host.toolSchemas?.[name] ?? { input: { type: "object" } };
    let text = this.described.get(name);
    if (!text) {
      text = describeToolText(name, schema);
      this.described.set(name, text);
    }
    return text;
  }

  async search(query: string, limit: number): Promise<Array<{ name: string; description: string }>> {
    const documents = this.callable().map((name) => ({ name, terms: documentTerms(name, this.host.toolSchemas?.[name]) }));
    const names = rank(query, documents).slice(0, limit);
    return Promise.all(names.map(async (name) => ({ name, description: (await this.describe(name)) ?? "" })));
  }

  /** A discover call from the script: `describeTool` or `searchTools` with its JSON arguments. */
  answer(operation: string, input: unknown): Promise<unknown> {
    const fields = (input ?? {}) as { name?: unknown; query?: unknown; limit?: unknown };
    if (operation === "describeTool" && typeof fields.name === "string") return this.describe(fields.name);
    if (operation === "searchTools" && typeof fields.query === "string" && typeof fields.limit === "number") return this.search(fields.query, fields.limit);
    return Promise.reject(Object.assign(new TypeError(`unknown discovery call ${operation}`), { code: "host_error" }));
  }
}
