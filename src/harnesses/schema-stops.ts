import { SCHEMA_WORK_LIMIT_MS, SCHEMA_WORK_MEMORY_MB } from "./schema-limits.ts";

/**
 * What a stopped check says: the pattern that was running when it was stopped, or, with none
 * running, the keywords of the schema whose time grows faster than the value (uniqueItems, $ref),
 * each with where in the schema it is, so the author knows what to change.
 */

/** Where a keyword sits in a schema, as a JSON pointer ("" for the schema itself). */
interface KeywordAt {
  keyword: "pattern" | "uniqueItems" | "$ref";
  at: string;
  pattern?: string;
}

/** `pattern`s, `uniqueItems: true` and `$ref`s in `schema`, in the order a reader meets them; found without recursion. */
function keywordsIn(schema: unknown): KeywordAt[] {
  const found: KeywordAt[] = [];
  const stack: Array<{ node: unknown; at: string }> = [{ node: schema, at: "" }];
  while (stack.length > 0) {
    const { node, at } = stack.pop()!;
    if (node === null || typeof node !== "object") continue;
    if (!Array.isArray(node)) {
      const record = node as Record<string, unknown>;
      if (typeof record.pattern === "string") found.push({ keyword: "pattern", at, pattern: record.pattern });
      if (record.uniqueItems === true) found.push({ keyword: "uniqueItems", at });
      if (typeof record.$ref === "string") found.push({ keyword: "$ref", at });
    }
    const entries = Object.entries(node);
    for (let index = entries.length - 1; index >= 0; index--) {
      const [key, child] = entries[index]!;
      if (child !== null && typeof child === "object") stack.push({ node: child, at: `${at}/${key.replaceAll("~", "~0").replaceAll("/", "~1")}` });
    }
  }
  return found;
}

/** The `pattern` strings `schema` holds, in the order a reader meets them. */
export function patternsIn(schema: unknown): string[] {
  return keywordsIn(schema).flatMap((found) => (found.pattern === undefined ? [] : [found.pattern]));
}

/** Up to three places, then how many more: "/a, /b, /c and 4 more". */
function places(found: KeywordAt[]): string {
  const named = found.slice(0, 3).map((one) => JSON.stringify(one.at.slice(0, 200) || "/").slice(1, -1));
  return found.length > 3 ? `${named.join(", ")} and ${found.length - 3} more` : named.join(", ");
}

/** What was running when a check with no pattern running was stopped, named from the schema. */
function notInAPattern(schema: unknown): { where: string; why: string } {
  const found = keywordsIn(schema);
  const unique = found.filter((one) => one.keyword === "uniqueItems");
  const refs = found.filter((one) => one.keyword === "$ref");
  const refsToo = refs.length > 0 ? `; $refs that branch into each other (at ${places(refs)}) grow faster still` : "";
  if (unique.length > 0) {
    return {
      where: ` at uniqueItems (at ${places(unique)})`,
      why: `uniqueItems compares every pair of an array's items, so its time grows with the square of the array's length; give the array a maxItems${refsToo}`,
    };
  }
  if (refs.length > 0) {
    return { where: ` in the $refs (at ${places(refs)})`, why: "$refs that branch into each other (an anyOf of $refs that each branch again) take time that grows exponentially with their depth" };
  }
  return { where: "", why: "uniqueItems over a long array, or $refs that branch into each other, take time that grows much faster than the value" };
}

/**
 * Why a check of `subject` ("the child's answer against outputSchema") was stopped past a limit,
 * with no final period: the pattern it was running, or, with none, what else in `schema` grows that fast.
 */
export function stoppedCheck(subject: string, stopped: { kind: "too_slow" | "out_of_memory"; pattern: string | undefined }, schema?: unknown): string {
  const pattern = stopped.pattern === undefined ? undefined : `the pattern ${JSON.stringify(stopped.pattern.slice(0, 200))}`;
  if (stopped.kind === "out_of_memory") {
    return `Checking ${subject} ran out of the checking worker's ${SCHEMA_WORK_MEMORY_MB} MB of memory${pattern ? ` at ${pattern}` : ""}, so the check was stopped`;
  }
  const took = `Checking ${subject} took longer than ${SCHEMA_WORK_LIMIT_MS / 1000} s`;
  if (pattern === undefined) {
    const { where, why } = notInAPattern(schema);
    return `${took}${where}, so the check was stopped: ${why}`;
  }
  return (
    `${took} at ${pattern}, so the check was stopped: ` +
    "a pattern whose repetitions can match the same text in many ways (such as ^(a+)+$) takes exponential time on some strings. Write the pattern so each character can match only one way"
  );
}
