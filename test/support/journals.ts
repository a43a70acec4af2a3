import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** The path of one file of a run's folder, in whichever session of the Flow home keeps the run. */
export function runFileOf(flowHome: string, runId: string, name: string): string {
  const projects = join(flowHome, "projects");
  for (const project of readdirSync(projects)) {
    for (const key of readdirSync(join(projects, project, "sessions"))) {
      const dir = join(projects, project, "sessions", key, "runs", runId);
      if (existsSync(dir)) return join(dir, name);
    }
  }
  throw new Error(`no run folder for ${runId}`);
}

/** A run's journal lines, parsed, in whichever session of the Flow home keeps it. */
export function journalOf(flowHome: string, runId: string): Record<string, unknown>[] {
  const text = readFileSync(runFileOf(flowHome, runId, "journal.jsonl"), "utf8");
  return text.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
}
