/**
 * Runs one child on a CLI harness directly (no Pi session), against the fake executables, and
 * collects everything the harness reported.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createCliHarnessByName, type CliHarnessOptions } from "../../src/harnesses/cli/index.ts";
import { BUILTIN_ROLES } from "../../src/harnesses/roles.ts";
import { childTimeout } from "../../src/harnesses/outcomes.ts";
import type { ChildQuotas } from "../../src/harnesses/quotas.ts";
import type { ChildDiagnostic, ChildProgress, ChildResult } from "../../src/harnesses/types.ts";
import { pathWithFakes } from "../support/fake-cli.ts";

export interface CliRun {
  result: ChildResult;
  outputs: string[];
  diagnostics: ChildDiagnostic[];
  progress: ChildProgress[];
}

export interface CliRunInput {
  prompt?: string;
  role?: keyof typeof BUILTIN_ROLES;
  /** The child's system prompt, instead of its role's. */
  systemPrompt?: string;
  /** The child's tools after its parent's bound, instead of its role's. */
  tools?: string[];
  /** The profile's deny list, which the harness receives beside the bounded tools. */
  disallowedTools?: string[];
  /** Where the child works; the workspace's folder by default. */
  cwd?: string;
  /** What the child may load of its own; a trusted project and no isolation by default. */
  loading?: { projectTrusted: boolean; isolated: boolean };
  outputSchema?: Record<string, unknown>;
  quotas?: ChildQuotas;
  env?: NodeJS.ProcessEnv;
  options?: CliHarnessOptions;
  /** Called with the first progress report: the fake is running and has recorded itself. */
  onStarted?(controls: { cancel(): void; timeOut(): void }): void;
}

export class CliWorkspace {
  readonly cwd = mkdtempSync(join(tmpdir(), "pi-flow-cli-"));

  constructor() {
    writeFileSync(join(this.cwd, "hello.txt"), "hello\n");
  }

  async run(harness: string, input: CliRunInput = {}): Promise<CliRun> {
    const controller = new AbortController();
    const run: Omit<CliRun, "result"> = { outputs: [], diagnostics: [], progress: [] };
    const env = input.env ?? { ...process.env, PATH: pathWithFakes() };
    const child = createCliHarnessByName(harness, { ...input.options, env });
    const result = await child.run({
      profile: {
        ...BUILTIN_ROLES[input.role ?? "worker"]!,
        ...(input.tools ? { tools: input.tools } : {}),
        ...(input.disallowedTools ? { disallowedTools: input.disallowedTools } : {}),
        ...(input.systemPrompt !== undefined ? { systemPrompt: input.systemPrompt } : {}),
      },
      task: { agent: `role:${input.role ?? "worker"}`, description: "cli harness test" },
      prompt: input.prompt ?? "Run the build and report.",
      cwd: input.cwd ?? this.cwd,
      loading: input.loading ?? { projectTrusted: true, isolated: false },
      ...(input.outputSchema ? { outputSchema: input.outputSchema } : {}),
      ...(input.quotas ? { quotas: input.quotas } : {}),
      signal: controller.signal,
      onProgress: (progress) => {
        run.progress.push(progress);
        if (run.progress.length === 1) {
          input.onStarted?.({
            cancel: () => controller.abort(),
            timeOut: () => controller.abort(childTimeout()),
          });
        }
      },
      onOutput: (text) => run.outputs.push(text),
      onDiagnostic: (entry) => run.diagnostics.push(entry),
    });
    return { ...run, result };
  }

  dispose(): void {
    rmSync(this.cwd, { recursive: true, force: true });
  }
}
