import type { Finding } from "./rule.ts";

/**
 * Pieces of a match that the rules read joined (string literals chained by `+`, the items of an
 * argument list): where each piece's text starts in the match, and the text.
 */
export interface JoinedPart {
  at: number;
  text: string;
}

/** Spans found in the parts joined by `separator`, mapped back to the parts that hold them. */
export function findingsInParts(parts: readonly JoinedPart[], found: readonly number[], separator: string): Finding[] {
  const findings: Finding[] = [];
  for (let i = 0; i < found.length; i += 2) {
    let offset = 0;
    for (const part of parts) {
      const start = Math.max(found[i]!, offset);
      const end = Math.min(found[i + 1]!, offset + part.text.length);
      if (end > start) findings.push({ start: part.at + start - offset, end: part.at + end - offset });
      offset += part.text.length + separator.length;
    }
  }
  return findings;
}
