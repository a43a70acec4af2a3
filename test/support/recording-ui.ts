/**
 * The terminal side of Pi's extension UI for tests: what pi-flow asks the screen to show (widgets,
 * status segments, notifications) is recorded, and dialogs are answered from a script, as a person
 * would answer them. Pi's session, commands and extension runtime are all real.
 */
import type { ExtensionUIContext, Theme } from "@earendil-works/pi-coding-agent";
import type { Component, TUI } from "@earendil-works/pi-tui";

type WidgetFactory = (tui: TUI, theme: Theme) => Component & { dispose?(): void };

export interface RecordingUi {
  context: ExtensionUIContext;
  /** Current widgets by key: lines, or a component factory. */
  widgets: Map<string, string[] | WidgetFactory>;
  statuses: Map<string, string>;
  /** Every widget and status change, in order, as "widget key on/off", "status key text". */
  history: string[];
  /** Answers for select() and confirm(), in the order asked; a function picks from what select() offers. */
  answers: (string | boolean | undefined | ((options: string[]) => string | undefined))[];
  /** What select() offered, in the order asked. */
  offered: { title: string; options: string[] }[];
}

export function recordingUi(theme: Theme): RecordingUi {
  const recording: Omit<RecordingUi, "context"> = { widgets: new Map(), statuses: new Map(), history: [], answers: [], offered: [] };
  const known: Partial<ExtensionUIContext> = {
    theme,
    async select(title, options) {
      recording.offered.push({ title, options });
      const answer = recording.answers.shift();
      if (typeof answer === "function") return answer(options);
      return typeof answer === "string" ? answer : undefined;
    },
    async confirm() {
      return recording.answers.shift() === true;
    },
    setWidget(key: string, content: unknown) {
      if (content === undefined) recording.widgets.delete(key);
      else recording.widgets.set(key, content as string[] | WidgetFactory);
      recording.history.push(`widget ${key} ${content === undefined ? "off" : "on"}`);
    },
    setStatus(key, text) {
      if (text === undefined) recording.statuses.delete(key);
      else recording.statuses.set(key, text);
      recording.history.push(`status ${key} ${text ?? "off"}`);
    },
  };
  // Everything else a TUI offers (titles, editor text, working indicators) is accepted and ignored.
  const context = new Proxy(known as ExtensionUIContext, {
    get(target, property: string) {
      if (property in target) return target[property as keyof ExtensionUIContext];
      return () => undefined;
    },
  });
  return { ...recording, context } as RecordingUi;
}
