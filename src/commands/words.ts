import { FlowError } from "../contract/errors.ts";

/**
 * The words of a `/flow` line, as Pi splits a prompt template's arguments: whitespace separates,
 * and a word that starts with a "double" or 'single' quote runs to its closing quote, so a path
 * with spaces stays whole (`/flow report <runId> "my report.html"`). An apostrophe inside a word
 * is just a letter; a quote left open is refused rather than guessed at.
 */
export function commandWords(line: string): string[] {
  const words: string[] = [];
  let index = 0;
  while (index < line.length) {
    while (index < line.length && /\s/.test(line[index]!)) index++;
    if (index >= line.length) break;
    const quote = line[index];
    if (quote === '"' || quote === "'") {
      const close = line.indexOf(quote, index + 1);
      if (close < 0) throw new FlowError("request_invalid", `The ${quote} quote opened at "${line.slice(index)}" is not closed.`);
      words.push(line.slice(index + 1, close));
      index = close + 1;
      continue;
    }
    const start = index;
    while (index < line.length && !/\s/.test(line[index]!)) index++;
    words.push(line.slice(start, index));
  }
  return words;
}

/** Refuses words past the last one a subcommand takes, instead of dropping them unseen. */
export function atMost(words: readonly string[], count: number, usage: string): void {
  if (words.length > count) throw new FlowError("request_invalid", `Unexpected "${words.slice(count).join(" ")}". Usage: ${usage}`);
}
