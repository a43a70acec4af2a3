/**
 * Fake `claude` and `codex` executables (test/fixtures/fake-cli/bin) that answer with the real
 * CLIs' stream formats, and what tests need around them: a PATH that finds them, the record each
 * run leaves in its working directory, and a check that a process is really gone.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { PROJECT_ROOT } from "./pi-session.ts";

export const FAKE_CLI_BIN = join(PROJECT_ROOT, "test", "fixtures", "fake-cli", "bin");

/** PATH with the fakes first. */
export const pathWithFakes = (path = process.env.PATH ?? ""): string => `${FAKE_CLI_BIN}${delimiter}${path}`;

/** What a fake run recorded: its pid, arguments, environment, prompt and any children it started. */
export interface FakeRunRecord {
  name: string;
  pid: number;
  argv: string[];
  env: Record<string, string>;
  cwd: string;
  prompt: string;
  /** claude: the role's prompt, read from the file --append-system-prompt-file named. */
  systemPrompt?: string;
  /** claude: the outputSchema it was given, on the command line or on stdin. */
  jsonSchema?: unknown;
  scenario: string;
  children?: number[];
  /** codex: the project's skills (their SKILL.md, by real path) listed to the model. */
  skills?: string[];
}

export function fakeRuns(cwd: string, name?: string): FakeRunRecord[] {
  const dir = join(cwd, ".fake-cli");
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((file) => file.endsWith(".json") && (name === undefined || file.startsWith(`${name}-`)))
    .map((file) => JSON.parse(readFileSync(join(dir, file), "utf8")) as FakeRunRecord);
}

/** A process is gone when it no longer exists, or is a zombie waiting to be reaped (it runs no code). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

/** Every process a fake run was known to have: the fake itself and the children it recorded. */
export const pidsOf = (run: FakeRunRecord): number[] => [run.pid, ...(run.children ?? [])];

/** An external_delegate call that runs the worker role on a CLI harness (a fake CLI in tests). */
export const cliTask = (harness: string, prompt = "Run the build and report.") => ({
  role: "worker",
  harness,
  description: `Build via ${harness}`,
  prompt,
  context: { mode: "none" },
});
