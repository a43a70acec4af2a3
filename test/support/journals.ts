import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** A run's journal lines, parsed, in whichever session of the Flow home keeps it. */
export function journalOf(flowHome: string, runId: string): Record<string, unknown>[] {
  const projects = join(flowHome, "projects");
  for (const project of readdirSync(projects)) {
    for (const key of readdirSync(join(projects, project, "sessions"))) {
      try {
        const text = readFileSync(join(projects, project, "sessions", key, "runs", runId, "journal.jsonl"), "utf8");
        return text.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
      } catch {
        // Another session's folder.
      }
    }
  }
  throw new Error(`no journal for ${runId}`);
}
