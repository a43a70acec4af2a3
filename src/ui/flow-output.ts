/**
 * What `/flow` prints: a session entry the transcript draws and the model never reads (Pi keeps
 * custom entries out of the model's context). Plain lines, so the same text reads in any mode.
 */
import type { EntryRenderOptions, Theme } from "@earendil-works/pi-coding-agent";
import { Container, Text, type Component } from "@earendil-works/pi-tui";
import { oneLine, terminalText } from "./format.ts";
import { FitLines } from "./lines.ts";

export const FLOW_OUTPUT_TYPE = "pi-flow-output";

export interface FlowOutput {
  /** "/flow runs", "/flow doctor", ... */
  title: string;
  lines: string[];
}

export function isFlowOutput(value: unknown): value is FlowOutput {
  const output = value as Partial<FlowOutput> | null;
  return typeof output === "object" && output !== null && typeof output.title === "string" && Array.isArray(output.lines);
}

/** Tables are cut to the width; prose lines (starting with two spaces or longer than a table row) wrap. */
export function renderFlowOutput(entry: { data?: unknown }, _options: EntryRenderOptions, theme: Theme): Component | undefined {
  if (!isFlowOutput(entry.data)) return undefined;
  const { title, lines } = entry.data;
  const container = new Container();
  // /flow strips escapes before it stores an entry; one from an older session file may still hold a child's.
  container.addChild(new FitLines(() => [theme.fg("toolTitle", theme.bold(oneLine(title)))]));
  container.addChild(new Text(terminalText(lines.join("\n")), 1, 0));
  return container;
}
