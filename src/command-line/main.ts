import { FlowError } from "../contract/errors.ts";
import { errorCode, groupCommit } from "../runs/index.ts";
import { closestName } from "../../runtime/closest-name.ts";
import { shellQuote } from "./args.ts";
import { EXIT, flushed, reportError } from "./exit.ts";
import { USAGE, version } from "./usage.ts";

const wantsHelp = (argv: readonly string[]): boolean => argv.includes("--help") || argv.includes("-h");

/**
 * The command line as the session records it, `--args` left out: its JSON is in the tool call the
 * session records next (redacted string by string), while a secret inside JSON inside a shell-quoted
 * line is text no redaction rule can be sure to read.
 */
function recordedCommandLine(argv: readonly string[]): string {
  const shown = argv.map((arg, index) => {
    if (arg.startsWith("--args=")) return "--args=<args>";
    return argv[index - 1] === "--args" ? "<args>" : shellQuote(arg);
  });
  return ["flow", ...shown].join(" ");
}

/** `did you mean run? ` for a misspelt command (`flow rnu`), when one is that near. */
function nearCommand(given: string): string {
  const near = closestName(given, COMMANDS);
  return near === undefined ? "" : `did you mean ${near}? `;
}

const COMMANDS = ["run", "check", "types", "runs", "worker", "help"] as const;

// Each command is loaded when it runs: `flow --help` never pays for Pi's start-up.
async function dispatch(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  const help = async (topic: readonly string[]) => (await import("./help-command.ts")).helpCommand(topic);
  if (command === undefined || command === "--help" || command === "-h" || wantsHelp(rest)) {
    process.stdout.write(`${USAGE}\n`);
    return EXIT.succeeded;
  }
  if (command === "--version" || command === "-v") {
    process.stdout.write(`${version()}\n`);
    return EXIT.succeeded;
  }
  switch (command) {
    case "run":
      return (await import("./run-command.ts")).runCommand(rest, recordedCommandLine(argv));
    case "check":
      return (await import("./check.ts")).checkCommand(rest);
    case "types":
      return (await import("./types.ts")).typesCommand(rest);
    case "runs":
      return (await import("./runs-command.ts")).runsCommand(rest);
    case "worker":
      return (await import("./worker.ts")).workerCommand(rest);
    case "help":
      return help(rest);
    default:
      throw new FlowError("request_invalid", `Unknown command "${command}"; ${nearCommand(command)}flow --help lists the commands.`);
  }
}

/** A reader that went away (`flow run … | head`) must not kill a run half-way: later output is dropped. */
function ignoreClosedPipes(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (error: Error) => {
      if (errorCode(error) !== "EPIPE") throw error;
    });
  }
}

/**
 * The `flow` command. Returns its exit code once its output is flushed; the entry (bin/flow.js)
 * exits with it, so no Pi session, worker or timer can hold the process open.
 */
export async function main(argv: readonly string[]): Promise<number> {
  ignoreClosedPipes();
  // A write past a file size limit (ulimit -f) then fails with EFBIG, as on a full disk, and the run
  // reports its evidence incomplete, instead of the signal ending flow half-way.
  process.on("SIGXFSZ", () => undefined);
  let code: number;
  try {
    code = await dispatch(argv);
  } catch (error) {
    code = reportError(error);
  }
  await groupCommit().idle(); // queued record rewrites reach the disk before the process exits
  await flushed();
  return code;
}
