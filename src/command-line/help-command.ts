import { TOOL_NAMES } from "../contract/envelope.ts";
import { FlowError } from "../contract/errors.ts";
import { answerHelp, type HelpSources } from "../help/answer.ts";
import { stripControls } from "../runs/index.ts";
import { WORKFLOW_HELPERS } from "../../helpers/index.ts";
import { EXIT } from "./exit.ts";
import { CHECK_USAGE, RUN_USAGE, RUNS_USAGE, TYPES_USAGE, USAGE, WORKER_USAGE } from "./usage.ts";

/** The saved workflows and roles of the project here, as external_help lists them; loaded only for those topics. */
async function catalogSource(): Promise<HelpSources["catalog"]> {
  const [{ readCatalog }, { flowHome }, { resolveProjectTrust }, { getAgentDir }] = await Promise.all([
    import("../orchestrator/workflow/catalog.ts"),
    import("./project-runs.ts"),
    import("../trust/project-trust.ts"),
    import("@earendil-works/pi-coding-agent"),
  ]);
  return (cwd) => readCatalog(cwd, flowHome(), resolveProjectTrust(cwd, getAgentDir()));
}

/** The commands `flow help <command>` gives the usage of, as `flow <command> --help` does. */
const COMMAND_USAGE: Readonly<Record<string, string>> = { run: RUN_USAGE, check: CHECK_USAGE, types: TYPES_USAGE, runs: RUNS_USAGE, worker: WORKER_USAGE };

/**
 * `flow help [topic]`: external_help's topics as text; `flow help <command>`, that command's usage. `flow help contracts <tool>` and
 * `flow help harnesses <harness>` narrow them as the tool's `tool` and `harness` do.
 */
export async function helpCommand(argv: readonly string[]): Promise<number> {
  const [topic, detail, ...extra] = argv;
  if (topic === undefined) {
    const { backendLine, configuredWorkersLine } = await import("../backends/index.ts");
    const workers = await configuredWorkersLine(undefined);
    process.stdout.write(`${USAGE}\n\nBackend: ${backendLine(undefined)}\n${workers === undefined ? "" : `Workers: ${workers}\n`}`);
    return EXIT.succeeded;
  }
  if (detail === undefined && Object.hasOwn(COMMAND_USAGE, topic)) {
    process.stdout.write(`Usage: ${COMMAND_USAGE[topic]}\n\nflow --help says what each command does; docs/cli.md has the details.\n`);
    return EXIT.succeeded;
  }
  if (extra.length > 0) throw new FlowError("request_invalid", `flow help takes a topic and at most one harness or tool; got "${extra.join(" ")}" too.`);
  const input = {
    topic,
    ...(detail !== undefined && topic === "harnesses" ? { harness: detail } : {}),
    ...(detail !== undefined && topic !== "harnesses" ? { tool: detail } : {}),
  };
  const registered = process.env.PI_FLOW_WORKFLOWS === "off" ? TOOL_NAMES.filter((name) => name !== "external_workflow") : [...TOOL_NAMES];
  const catalog = topic === "workflows" || topic === "roles" ? await catalogSource() : undefined;
  const sources: HelpSources = { registeredTools: () => registered, workflowHelpers: WORKFLOW_HELPERS, ...(catalog ? { catalog } : {}) };
  const envelope = await answerHelp(input, sources, process.cwd());
  if (!envelope.ok) throw new FlowError(envelope.error.code, envelope.error.message);
  const data = envelope.data;
  const text = "text" in data ? data.text : JSON.stringify("index" in data ? data.index : data.contract, null, 2);
  // The workflows and roles topics quote saved files' descriptions: no escape sequence of theirs reaches the terminal.
  process.stdout.write(`${stripControls(text)}\n`);
  return EXIT.succeeded;
}
