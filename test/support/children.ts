import { fauxAssistantMessage, fauxText, type FauxResponseStep, type Message } from "@earendil-works/pi-ai";

export type Seen = { system: string; user: string; all: string };

/** A message's text; a system message keeps most of its prompt in named sections. */
const textOf = (message: Message): string => {
  const content =
    typeof message.content === "string"
      ? message.content
      : (message.content as { type: string; text?: string }[]).map((part) => part.text ?? "").join("");
  const sections = (message as { sections?: Record<string, string | null> }).sections ?? {};
  return [content, ...Object.values(sections).filter((text): text is string => typeof text === "string")].join("\n");
};

/** What a child's model request contained: its system prompt, its user messages, everything. */
export function seenBy(messages: readonly Message[]): Seen {
  const by = (role: string) => messages.filter((message) => (message.role as string) === role).map(textOf).join("\n");
  return { system: by("system"), user: by("user"), all: messages.map(textOf).join("\n") };
}

/** A child's model answers with text, recording what it was shown. */
export function childAnswers(text: string, seen?: Seen[]): FauxResponseStep {
  return (context) => {
    seen?.push(seenBy(context.messages));
    return fauxAssistantMessage([fauxText(text)]);
  };
}

/** A child's model request fails, as a provider error does. */
export function childModelFails(errorMessage: string): FauxResponseStep {
  return () => fauxAssistantMessage([], { stopReason: "error", errorMessage });
}

/** A child's model never answers until its request is aborted (by a cancel or a timeout). */
export function childHangs(started?: () => void): FauxResponseStep {
  return (_context, options) =>
    new Promise((resolve) => {
      started?.();
      const aborted = () => resolve(fauxAssistantMessage([], { stopReason: "aborted", errorMessage: "aborted" }));
      if (options?.signal?.aborted) aborted();
      options?.signal?.addEventListener("abort", aborted, { once: true });
    });
}

/** A child answers only when the test releases it, so a test can act while the run is live. */
export function childAnswersWhenReleased(text: string): { step: FauxResponseStep; release(): void; started: Promise<void> } {
  let release!: () => void;
  let markStarted!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  return {
    step: async () => {
      markStarted();
      await gate;
      return fauxAssistantMessage([fauxText(text)]);
    },
    release,
    started,
  };
}
