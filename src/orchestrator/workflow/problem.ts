/** One problem in a workflow file, with a 1-based position, as `flow check` prints it. */
export interface Problem {
  file: string;
  line: number;
  column: number;
  message: string;
  /** Printed under the message: a syntax error's line, with a caret (src/runs/source-excerpt.ts). */
  excerpt?: string;
}

export const formatProblem = (problem: Problem): string =>
  `${problem.file}:${problem.line}:${problem.column}: ${problem.message}${problem.excerpt === undefined ? "" : `\n${problem.excerpt}`}`;
