import { resolve } from "node:path";
import { FlowError } from "../contract/errors.ts";
import { inspectCassette, readCassetteText, strictProblems, type ReplayMode } from "../harnesses/index.ts";

export interface CassetteReport {
  /** `FILE:LINE: problem` lines, one per bad line, every problem of the line in it. */
  problems: string[];
  /** What a person should know about a cassette that is fine, such as how it must be replayed. */
  notes: string[];
}

/**
 * Checks cassettes without running anything, as a replay in `mode` would read them: every bad line
 * of every file, each with all that is wrong. Strict also needs each entry's promptHash.
 */
export function checkCassettes(files: readonly string[], mode: ReplayMode | undefined): CassetteReport {
  const report: CassetteReport = { problems: [], notes: [] };
  for (const file of files) {
    let text: string;
    try {
      text = readCassetteText(resolve(file));
    } catch (error) {
      if (!(error instanceof FlowError)) throw error;
      report.problems.push(`${file}:1: ${error.message}`);
      continue;
    }
    const { cassette, problems } = inspectCassette(text);
    const strict = cassette && mode === "strict" ? strictProblems(cassette) : new Map<number, string[]>();
    for (const [line, found] of [...problems, ...strict].sort(([a], [b]) => a - b)) report.problems.push(`${file}:${line}: ${found.join("; ")}`);
    if (!cassette || strict.size > 0) continue;
    const handWritten = cassette.entries.filter((entry) => entry.key.promptHash === undefined).length;
    const entries = `${cassette.entries.length} entr${cassette.entries.length === 1 ? "y" : "ies"}`;
    report.notes.push(handWritten === 0 ? `${file}: ${entries}, replayable strict or loose` : `${file}: ${entries}; ${handWritten} without promptHash, so replay it with --replay-mode loose`);
  }
  return report;
}
