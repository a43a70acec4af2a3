import type { Finding } from "./rule.ts";

/**
 * Pieces of a match that the rules read joined (string literals chained by `+`, the items of an
 * argument list): where each piece's text starts in the match, and the text.
 */
export interface JoinedPart {
  at: number;
  text: string;
}

/**
 * Spans found in `texts` joined by `separator`, clipped to each text that holds them: per text,
 * [start, end, …] in that text's own positions.
 */
export function spansByPart(texts: readonly string[], found: readonly number[], separator: string): number[][] {
  const byPart: number[][] = texts.map(() => []);
  for (let i = 0; i < found.length; i += 2) {
    let offset = 0;
    texts.forEach((text, n) => {
      const start = Math.max(found[i]!, offset) - offset;
      const end = Math.min(found[i + 1]!, offset + text.length) - offset;
      if (end > start) byPart[n]!.push(start, end);
      offset += text.length + separator.length;
    });
  }
  return byPart;
}

/** Spans found in the parts joined by `separator`, mapped back to where the parts stand in the match. */
export function findingsInParts(parts: readonly JoinedPart[], found: readonly number[], separator: string): Finding[] {
  const findings: Finding[] = [];
  spansByPart(
    parts.map((part) => part.text),
    found,
    separator,
  ).forEach((spans, n) => {
    for (let i = 0; i < spans.length; i += 2) findings.push({ start: parts[n]!.at + spans[i]!, end: parts[n]!.at + spans[i + 1]! });
  });
  return findings;
}
