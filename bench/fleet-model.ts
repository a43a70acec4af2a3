/**
 * A Pi extension for bench/fleet.ts: Pi's faux provider as model `faux/faux-1`, answering every
 * request after BENCH_CHILD_MS milliseconds (a child that takes a fixed time, spent waiting as a
 * model call is, not computing), so the wall time shows how children spread over workers.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { fauxAssistantMessage, fauxProvider, fauxText, type FauxResponseStep } from "@earendil-works/pi-ai";

export default function slowFauxModel(pi: ExtensionAPI): void {
  const delayMs = Number(process.env.BENCH_CHILD_MS ?? "500");
  const faux = fauxProvider({ provider: "faux", models: [{ id: "faux-1" }] });
  const answer: FauxResponseStep = async () => {
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    return fauxAssistantMessage([fauxText("done")]);
  };
  faux.setResponses(Array.from({ length: 100_000 }, () => answer));
  pi.registerProvider(faux.provider);
}
