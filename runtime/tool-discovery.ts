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

/**
 * The most characters a searchTools() query may have. A query is a few words; the host ranks it on
 * its own thread, uncounted by any call limit, so a query of megabytes asked again and again held
 * Pi's event loop for a fifth of a second each time.
 */
export const MAX_SEARCH_QUERY_CHARS = 4096;

/** One tool as BM25 reads it: its term count and how often each term occurs. */
interface SearchDocument {
  name: string;
  length: number;
  frequencies: Map<string, number>;
}

/** The callable tools indexed once per run: they do not change while it runs. */
interface SearchIndex {
  documents: SearchDocument[];
  /** How many documents hold each term. */
  containing: Map<string, number>;
  averageLength: number;
}

function indexOf(tools: ReadonlyArray<{ name: string; terms: string[] }>): SearchIndex {
  const containing = new Map<string, number>();
  const documents = tools.map(({ name, terms: words }) => {
    const frequencies = new Map<string, number>();
    for (const word of words) frequencies.set(word, (frequencies.get(word) ?? 0) + 1);
    for (const word of frequencies.keys()) containing.set(word, (containing.get(word) ?? 0) + 1);
    return { name, length: words.length, frequencies };
  });
  const averageLength = documents.reduce((sum, document) => sum + document.length, 0) / Math.max(1, documents.length);
  return { documents, containing, averageLength };
}

/** BM25 scores of each document for the query; documents scoring 0 are left out. Linear in the query. */
function rank(query: string, index: SearchIndex): string[] {
  const wanted = [...new Set(terms(query))];
  const { documents, containing, averageLength } = index;
  const scored = documents.map((document) => {
    let score = 0;
    for (const term of wanted) {
      const frequency = document.frequencies.get(term) ?? 0;
      if (frequency === 0) continue;
      const holding = containing.get(term) ?? 0;
      const idf = Math.log(1 + (documents.length - holding + 0.5) / (holding + 0.5));
      score += (idf * frequency * (K1 + 1)) / (frequency + K1 * (1 - B + (B * document.length) / Math.max(1, averageLength)));
    }
    return { name: document.name, score };
  });
  return scored
    .filter((entry) => entry.score > 0)
    .sort((a, b) => b.score - a.score || a.name.localeCompare(b.name))
    .map((entry) => entry.name);
}

/**
 * Declarations by tool name and schema text, shared by every run of the process: rendering one
 * (json-schema-to-typescript, then prettier) costs milliseconds, and the same tools are described
 * run after run. A schema that changes is a new key. The oldest entries go first past the bound.
 */
const DECLARATION_CACHE_ENTRIES = 256;
const declarations = new Map<string, Promise<string>>();

function declarationOf(name: string, schema: ToolSchema): Promise<string> {
  const key = `${name}\u0000${JSON.stringify(schema)}`;
  let text = declarations.get(key);
  if (!text) {
    if (declarations.size >= DECLARATION_CACHE_ENTRIES) declarations.delete(declarations.keys().next().value as string);
    text = describeToolText(name, schema);
    // A rendering that failed is not kept: the next run tries again.
    text.catch(() => declarations.delete(key));
    declarations.set(key, text);
  }
  return text;
}

export class ToolDiscovery {
  private readonly host: WorkflowHost;

  constructor(host: WorkflowHost) {
    this.host = host;
  }

  /** Only the tools this workflow may call are described or found. */
  private callable(): string[] {
    return Object.keys(this.host.tools ?? {}).sort();
  }

  describe(name: string): Promise<string | undefined> {
    if (!this.callable().includes(name)) return Promise.resolve(undefined);
    return declarationOf(name, this.host.toolSchemas?.[name] ?? { input: { type: "object" } });
  }

  private index: SearchIndex | undefined;

  async search(query: string, limit: number): Promise<Array<{ name: string; description: string }>> {
    if (query.length > MAX_SEARCH_QUERY_CHARS) throw queryTooLong(query.length);
    this.index ??= indexOf(this.callable().map((name) => ({ name, terms: documentTerms(name, this.host.toolSchemas?.[name]) })));
    const names = rank(query, this.index).slice(0, limit);
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

function queryTooLong(chars: number): TypeError {
  return new TypeError(`searchTools(query): the query has ${chars} characters, at most ${MAX_SEARCH_QUERY_CHARS}: search with a few words`);
}
