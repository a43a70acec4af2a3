/**
 * `/flow`: a person's way to pi-flow without asking the model (and without a model key).
 *   /flow runs [runId [inspect|tail|cancel]]   this session's runs; in the TUI, pick one
 *   /flow report <runId> [FILE]                the run as one HTML page
 *   /flow apply|discard <runId>...             worktree runs' kept changes (apply asks first)
 *   /flow workflows | roles | doctor | help [topic]
 * Output is a session entry the transcript shows and the model never reads.
 */
import type { ExtensionAPI, ExtensionCommandContext } from "@earendil-works/pi-coding-agent";
import type { AutocompleteItem } from "@earendil-works/pi-tui";
import { FlowError } from "../contract/errors.ts";
import type { HarnessState } from "../harnesses/index.ts";
import { printable, type RunStore } from "../runs/index.ts";
import { answerHelp, HELP_TOPICS, type HelpSources } from "../help/answer.ts";
import { roleLines, workflowLines } from "./catalog.ts";
import { doctorLines } from "./doctor.ts";
import { FLOW_OUTPUT_TYPE, type FlowOutput } from "../ui/index.ts";
import { inspectLines, listedRuns, listLines, runLine, tailLines } from "./runs.ts";
import { reportLines } from "./report.ts";
import { changesCommand } from "./changes.ts";
import { atMost, commandWords } from "./words.ts";

export interface FlowCommandSources {
  runStore(ctx: ExtensionCommandContext): RunStore;
  flowHome(): string;
  agentDir(): string;
  harnessState(name: string, cwd: string): Promise<HarnessState>;
  /** Which backend runs workflow children (backends/). */
  backend?(): string;
  /** The dbos backend's workers seen; undefined on local. */
  workers?(): Promise<string | undefined>;
  /** Whether the session's project counts as trusted: an untrusted one's roles and workflows are left out. */
  projectTrusted(ctx: ExtensionCommandContext): boolean;
  help: HelpSources;
}

const SUBCOMMANDS = ["runs", "report", "workflows", "roles", "doctor", "apply", "discard", "help"] as const;
const RUN_ACTIONS = ["inspect", "tail", "cancel"] as const;

export const FLOW_USAGE = [
  "/flow runs                     this session's runs, newest first (in the TUI: pick one)",
  "/flow runs <runId> [inspect|tail|cancel]",
  "/flow report <runId> [FILE]    the run as one HTML page to open in a browser",
  "/flow workflows                saved workflows: source, description, arguments",
  "/flow roles                    roles children can take",
  "/flow apply <runId>...         merge worktree runs' kept changes into the working tree (asks first)",
  "/flow discard <runId>...       drop worktree runs' kept changes",
  "/flow doctor                   versions, model credentials, broken role files, run store, CLI harnesses",
  `/flow help [topic]             topics: ${HELP_TOPICS.join(", ")}`,
];

export function registerFlowCommand(pi: ExtensionAPI, sources: FlowCommandSources): void {
  // Kept in the user's session file: redacted like everything else pi-flow writes down, and drawn
  // on the terminal: an answer, a log or a file name a child wrote may not carry escape sequences.
  const print = (title: string, lines: string[]) => pi.appendEntry<FlowOutput>(FLOW_OUTPUT_TYPE, { title: printable(title), lines: lines.map(printable) });
  pi.registerCommand("flow", {
    description: "pi-flow runs, workflows, roles, doctor and help, without the model",
    getArgumentCompletions: (prefix: string): AutocompleteItem[] | null => {
      const words = prefix.split(/\s+/);
      const candidates = words.length <= 1 ? [...SUBCOMMANDS] : words[0] === "help" && words.length === 2 ? [...HELP_TOPICS].map((topic) => `help ${topic}`) : [];
      // A word typed whole has nothing left to complete: offering it again would make Enter apply
      // the completion instead of running the command, so /flow doctor would need two Enters.
      if (candidates.includes(prefix.trim())) return null;
      const items = candidates.filter((value) => value.startsWith(prefix)).map((value) => ({ value, label: value }));
      return items.length > 0 ? items : null;
    },
    handler: async (args, ctx) => {
      let sub = args.trim().split(/\s+/)[0] || "help";
      try {
        const words = commandWords(args);
        sub = words[0] ?? "help";
        const rest = words.slice(1);
        switch (sub) {
          case "runs":
            atMost(rest, 2, "/flow runs [runId [inspect|tail|cancel]]");
            return await runs(ctx, rest, sources, print);
          case "report":
            atMost(rest, 2, '/flow report <runId> [FILE] (quote a FILE with spaces: "my report.html")');
            return print("/flow report", reportLines(sources.runStore(ctx), rest, sources.flowHome(), ctx.cwd));
          case "workflows":
            atMost(rest, 0, "/flow workflows");
            return print("/flow workflows", workflowLines(ctx.cwd, sources.flowHome(), sources.projectTrusted(ctx)));
          case "roles":
            atMost(rest, 0, "/flow roles");
            return print("/flow roles", roleLines(ctx.cwd, sources.flowHome(), sources.projectTrusted(ctx)));
          case "doctor":
            atMost(rest, 0, "/flow doctor");
            return print("/flow doctor", await doctorLines(ctx, { flowHome: sources.flowHome(), agentDir: sources.agentDir(), projectTrusted: sources.projectTrusted(ctx), harnessState: (name) => sources.harnessState(name, ctx.cwd), ...(sources.backend ? { backend: sources.backend() } : {}), ...(sources.workers ? { workers: await sources.workers() } : {}) }));
          case "apply":
          case "discard":
            return await changesCommand(ctx, sources.runStore(ctx), sub, rest, print);
          case "help":
            atMost(rest, 1, "/flow help [topic]");
            return print(`/flow help${rest[0] ? ` ${rest[0]}` : ""}`, await helpLines(rest[0], sources.help));
          default:
            return print("/flow", [`Unknown subcommand "${sub}".`, ...FLOW_USAGE]);
        }
      } catch (error) {
        if (!(error instanceof FlowError)) throw error;
        print(`/flow ${sub}`, [`${error.code}: ${error.message}`]);
      }
    },
  });
}

async function helpLines(topic: string | undefined, help: HelpSources): Promise<string[]> {
  if (!topic) return [...FLOW_USAGE, "", "The model's side of pi-flow is the external_* tools; /flow help <topic> shows their guides."];
  const envelope = await answerHelp({ topic }, help);
  if (!envelope.ok) return [`${envelope.error.code}: ${envelope.error.message}`];
  const data = envelope.data;
  if ("text" in data) return data.text.split("\n");
  return JSON.stringify("index" in data ? data.index : data.contract, null, 2).split("\n");
}

type Print = (title: string, lines: string[]) => void;

async function runs(ctx: ExtensionCommandContext, rest: string[], sources: FlowCommandSources, print: Print): Promise<void> {
  const store = sources.runStore(ctx);
  let [runId, action] = rest;
  if (action !== undefined && !(RUN_ACTIONS as readonly string[]).includes(action)) {
    return print("/flow runs", [`Unknown action "${action}": use ${RUN_ACTIONS.join(", ")}.`]);
  }
  if (runId === undefined) {
    const views = listedRuns(store);
    // In the TUI a person picks a run, then what to do with it; elsewhere the list is the answer.
    if (ctx.mode !== "tui" || !ctx.hasUI || views.length === 0) return print("/flow runs", listLines(views));
    const lines = views.map((view) => runLine(view));
    const picked = await ctx.ui.select("pi-flow runs", lines);
    if (picked === undefined) return;
    runId = views[lines.indexOf(picked)]?.runId;
    if (runId === undefined) return;
    action = await ctx.ui.select(`Run ${runId}`, [...RUN_ACTIONS]);
    if (action === undefined) return;
  }
  switch (action ?? "inspect") {
    case "inspect":
      return print(`/flow runs ${runId} inspect`, inspectLines(store.view(runId), ctx.sessionManager.getSessionFile() !== undefined));
    case "tail":
      return print(`/flow runs ${runId} tail`, tailLines(store, runId));
    case "cancel": {
      // A malformed or unknown run ID, or a run that already ended, is said before anything is asked.
      if (store.view(runId).state.status === "done") return print(`/flow runs ${runId} cancel`, [`${runId} had already finished.`]);
      if (ctx.mode === "tui" && ctx.hasUI && !(await ctx.ui.confirm("Cancel run?", `Stop ${runId}? Its evidence is kept.`))) return;
      const { status } = store.cancel(runId, "cancelled with /flow runs");
      return print(`/flow runs ${runId} cancel`, [status === "requested" ? `Cancel requested for ${runId}; it records its end when it stops.` : `${runId} had already finished.`]);
    }
  }
}
