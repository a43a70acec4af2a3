import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PROJECT_ROOT } from "../support/pi-session.ts";

/** One width's section of a capture file, with Pi's blank padding lines folded, as docs/ui.md shows it. */
export function captureSection(name: string, width: number): string {
  const text = readFileSync(join(PROJECT_ROOT, "test/ui/captures", `${name}.txt`), "utf8");
  const sections = text.split(/^--- width (\d+)\n/m);
  const index = sections.findIndex((part, position) => position % 2 === 1 && Number(part) === width);
  if (index < 0) throw new Error(`no width ${width} in capture ${name}`);
  return sections[index + 1]!.replace(/\n{2,}/g, "\n\n").replace(/^\n+|\s+$/g, "");
}
