// Names a message lists: a project may hold any number of role files, workflows or tools, and each
// list goes into a model's context or onto a terminal whole.
import { capText } from "../../runtime/text.ts";

/** The most names a message lists, and the most of each it quotes (a script may write one a megabyte long). */
export const MAX_LISTED_NAMES = 20;
const MAX_NAME_CHARS = 100;

/** The first MAX_LISTED_NAMES of `names` in their order, then how many more: "a, b, … and 3 more". */
export function firstNames(names: readonly string[]): string {
  const more = names.length > MAX_LISTED_NAMES ? `, … and ${names.length - MAX_LISTED_NAMES} more` : "";
  return `${names.slice(0, MAX_LISTED_NAMES).map((name) => capText(name, MAX_NAME_CHARS)).join(", ")}${more}`;
}

/** firstNames of `names` sorted. */
export const listedNames = (names: readonly string[]): string => firstNames([...names].sort());
