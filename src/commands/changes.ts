// `/flow apply|discard <runId>...`: a person lands or drops worktree runs' kept changes. Apply is
// the one step that touches their working tree, so it shows what would change and asks first.
import type { ExtensionCommandContext } from "@earendil-works/pi-coding-agent";
import { changeRuns, formatChangeAnswers, type ChangeAction } from "../isolation/apply-runs.ts";
import { printable, type RunStore } from "../runs/index.ts";

type Print = (title: string, lines: string[]) => void;

/**
 * The files a run's patch names (its `diff --git` headers), from the first page of the view, as a
 * person may be shown them. Git quotes a name with a quote, a backslash or a control character in
 * it (`"b/\033[2Jx"`): such a name is read back from its quotes, and every name is made printable.
 */
function patchFiles(store: RunStore, runId: string): string[] {
  return filesOfPatch(store.inspectSingle(runId, "patch", { limitBytes: 256 * 1024 }).page.text);
}

/** The files the `diff --git` headers of a patch name, printable (see patchFiles). */
export function filesOfPatch(text: string): string[] {
  return [...text.matchAll(/^diff --git (?:"a\/(?:[^"\\]|\\.)*" "b\/((?:[^"\\]|\\.)*)"|a\/.* b\/(.*))$/gm)].map((match) =>
    printable(match[1] !== undefined ? unquoteGitPath(match[1]) : match[2]!),
  );
}

/** A path git wrote between quotes, C-style: `\\`, `\"`, `\t`, `\n` and octal bytes (of UTF-8). */
function unquoteGitPath(quoted: string): string {
  const named: Record<string, number> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, "\\": 92 };
  const source = Buffer.from(quoted, "utf8");
  const bytes: number[] = [];
  for (let i = 0; i < source.length; i++) {
    if (source[i] !== 0x5c) {
      bytes.push(source[i]!);
      continue;
    }
    const octal = /^[0-7]{3}/.exec(source.subarray(i + 1, i + 4).toString("latin1"));
    if (octal) {
      bytes.push(Number.parseInt(octal[0], 8));
      i += 3;
    } else if (i + 1 < source.length) {
      bytes.push(named[String.fromCharCode(source[i + 1]!)] ?? source[i + 1]!);
      i += 1;
    }
  }
  return Buffer.from(bytes).toString("utf8");
}

/** One line per run: its counts and the files it changes. */
function summary(store: RunStore, runId: string): string {
  const { changes } = store.view(runId);
  if (!changes) return `${runId}: no changes kept.`;
  return `${runId}: ${changes.files} file(s), +${changes.insertions} -${changes.deletions}: ${patchFiles(store, runId).join(", ")}`;
}

export async function changesCommand(ctx: ExtensionCommandContext, store: RunStore, action: ChangeAction, runIds: string[], print: Print): Promise<void> {
  const title = `/flow ${action}`;
  if (runIds.length === 0) return print(title, [`Give the run IDs: /flow ${action} <runId>...`]);
  const lines = runIds.map((runId) => summary(store, runId));
  if (action === "apply") {
    if (!ctx.hasUI) return print(title, [...lines, "Applying needs a confirmation, and this session has no UI to ask: use flow runs apply in a shell."]);
    const question = `Merge these changes into your working tree (nothing is staged)?\n${lines.join("\n")}`;
    if (!(await ctx.ui.confirm("Apply changes?", question))) return print(title, [...lines, "Nothing applied."]);
  }
  const answers = await changeRuns(store, action, runIds);
  return print(title, [...lines, ...formatChangeAnswers(answers).split("\n")]);
}
