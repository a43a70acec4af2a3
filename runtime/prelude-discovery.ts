// VM source of describeTool() and searchTools(), compiled inside the VM on first use (prelude.ts).
// It runs with the prelude's private bindings; request() sends the call to the host.
import { MAX_SEARCH_QUERY_CHARS } from "./tool-discovery.ts";

/** Discovery, as Pi's codemode offers it: answered by the host from the tools' declarations. */
export const DISCOVERY = String.raw`function describeTool(name) {
  if (typeof name !== "string") return Promise.reject(new TypeError("describeTool(name): name must be a string"));
  return request("discover", "describeTool", { name }, "describeTool() arguments").then((text) => (text === null ? undefined : text));
}
function searchTools(query, options) {
  if (typeof query !== "string") return Promise.reject(new TypeError("searchTools(query): query must be a string"));
  if (query.length > ${MAX_SEARCH_QUERY_CHARS}) {
    return Promise.reject(new TypeError("searchTools(query): the query has " + query.length + " characters, at most ${MAX_SEARCH_QUERY_CHARS}: search with a few words"));
  }
  const limit = options === undefined || options === null || options.limit === undefined ? 8 : options.limit;
  if (typeof limit !== "number" || !Number.isInteger(limit) || limit <= 0) {
    return Promise.reject(new TypeError("searchTools(query, { limit }): limit must be a positive integer"));
  }
  return request("discover", "searchTools", { query, limit }, "searchTools() arguments");
}`;
