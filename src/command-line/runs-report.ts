import { resolve } from "node:path";
import { runReport } from "../report/index.ts";
import { parseCommand, stringFlag } from "./args.ts";
import { EXIT } from "./exit.ts";
import { writePrivately } from "../runs/index.ts";
import { storeOfRun } from "./project-runs.ts";
import { RUNS_USAGE } from "./usage.ts";

/**
 * `flow runs report <runId> [--out FILE]`: the run as one HTML page (see docs/observability.md),
 * written to FILE (readable by its owner only: it holds the run's answers) or to stdout.
 */
export async function reportCommand(argv: readonly string[]): Promise<number> {
  const parsed = parseCommand(argv, { cwd: { type: "string" }, out: { type: "string" } }, { min: 1, max: 1, missing: "the <runId> to report on" }, RUNS_USAGE);
  const cwd = resolve(stringFlag(parsed, "cwd") ?? ".");
  const runId = parsed.positionals[0]!;
  const page = runReport(storeOfRun(cwd, runId), runId);
  const out = stringFlag(parsed, "out");
  if (out === undefined) {
    await new Promise<void>((done) => process.stdout.write(page, () => done()));
    return EXIT.succeeded;
  }
  const target = resolve(out);
  writePrivately(target, page);
  process.stderr.write(`report of ${runId} written to ${target}\n`);
  return EXIT.succeeded;
}
