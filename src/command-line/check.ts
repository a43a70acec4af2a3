import { resolve } from "node:path";
import { FlowError } from "../contract/errors.ts";
import { printable, readUserFile, SCRIPT_MAX_BYTES } from "../runs/index.ts";
import { REPLAY_MODES, type ReplayMode } from "../harnesses/index.ts";
import { checkWorkflowSource, formatProblem, knownNames as workflowKnownNames, literalTargetProblems, requestedTools, type KnownNames, type Problem } from "../orchestrator/workflow/index.ts";
import { CHECK_USAGE } from "./usage.ts";
import { listFlag, parseCommand, projectDir, stringFlag, TRUST_OPTIONS, trustOverride, type Parsed } from "./args.ts";
import { checkCassettes } from "./check-cassette.ts";
import { commandProjectTrust } from "./trust.ts";
import { EXIT } from "./exit.ts";
import { flowHome } from "./project-runs.ts";
import type { HeadlessSession } from "./headless.ts";

const OPTIONS = {
  cwd: { type: "string" },
  extension: { type: "string", multiple: true },
  cassette: { type: "string", multiple: true },
  "replay-mode": { type: "string" },
  ...TRUST_OPTIONS,
} as const;

/**
 * Parses and validates workflow files without running them. Prints `file:line:column: message` per
 * problem on stdout; exit 2 when there is any. `meta.tools` is checked against the tools a `flow`
 * session can call (pi-flow's, Pi's built-ins and any `--extension`), so a session is opened only
 * when some file names tools.
 */
export async function checkCommand(argv: readonly string[]): Promise<number> {
  const arity = (values: Parsed["values"]) => ({ min: values.cassette === undefined ? 1 : 0, max: Number.MAX_SAFE_INTEGER, missing: "the <path.js> of at least one workflow, or --cassette FILE, to check" });
  const parsed = parseCommand(argv, OPTIONS, arity, CHECK_USAGE);
  const cwd = projectDir(parsed);
  const cassettes = listFlag(parsed, "cassette");
  const mode = replayModeFlag(stringFlag(parsed, "replay-mode"));
  if (mode !== undefined && cassettes.length === 0) throw new FlowError("request_invalid", "--replay-mode goes with --cassette.");
  const extensions = listFlag(parsed, "extension").map((path) => resolve(path));
  const projectTrusted = commandProjectTrust(trustOverride(parsed), cwd, "check");
  let headless: HeadlessSession | undefined;
  let tools: string[] | undefined;
  const callableTools = (): readonly string[] => {
    if (!tools) throw new Error("callable tools are read before they are loaded");
    return tools;
  };
  const problems: Problem[] = [];
  let known: KnownNames | undefined;
  try {
    for (const file of parsed.positionals) {
      let source: string;
      try {
        // Regular files only, up to the size flow run takes: a FIFO or /dev/zero is a problem, not a hang.
        source = readUserFile(resolve(file), { what: "The script", maxBytes: SCRIPT_MAX_BYTES, code: "request_invalid" });
      } catch (error) {
        problems.push({ file, line: 1, column: 1, message: error instanceof FlowError ? error.message : String(error) });
        continue;
      }
      // A session costs a few hundred milliseconds: open one only for a file that names tools.
      if (!tools && requestedTools(source).length > 0) {
        const { openHeadlessSession } = await import("./headless.ts");
        headless = await openHeadlessSession({ cwd, projectTrusted, extensions });
        tools = headless.callableToolNames();
      }
      const checked = await checkWorkflowSource(source, file, tools ? callableTools : () => []);
      problems.push(...checked.problems);
      if (checked.workflow) problems.push(...literalTargetProblems(source, file, (known ??= knownNames(cwd, projectTrusted))));
    }
  } finally {
    await headless?.close();
  }
  // A message quotes what the file wrote (a meta key, a role name): no escape sequence of it, nor a secret, reaches the terminal.
  const lines = problems.map((problem) => formatProblem({ ...problem, message: printable(problem.message) }));
  const cassetteReport = checkCassettes(cassettes, mode ?? "loose");
  lines.push(...cassetteReport.problems);
  for (const line of lines) process.stdout.write(`${line}\n`);
  for (const note of cassetteReport.notes) process.stderr.write(`flow check: ${note}\n`);
  const files = parsed.positionals.length + cassettes.length;
  process.stderr.write(lines.length === 0 ? `flow check: ${files} file${files === 1 ? "" : "s"} ok\n` : `flow check: ${lines.length} problem${lines.length === 1 ? "" : "s"}\n`);
  return lines.length === 0 ? EXIT.succeeded : EXIT.refused;
}

function replayModeFlag(mode: string | undefined): ReplayMode | undefined {
  if (mode === undefined) return undefined;
  if (!(REPLAY_MODES as readonly string[]).includes(mode)) throw new FlowError("request_invalid", `--replay-mode must be ${REPLAY_MODES.join(" or ")}.`);
  return mode as ReplayMode;
}

/** The roles, agent definitions and saved workflows a run in this project could name. */
export function knownNames(cwd: string, projectTrusted: boolean): KnownNames {
  return workflowKnownNames(cwd, flowHome(), projectTrusted);
}
