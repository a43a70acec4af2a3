import { existsSync, readFileSync } from "node:fs";

/** The source of a Pi extension that appends one line to `marker` each time Pi loads it. */
export const markerExtension = (marker: string): string =>
  `import { appendFileSync } from "node:fs";\nexport default function () { appendFileSync(${JSON.stringify(marker)}, "loaded\\n"); }\n`;

/** How many times a marker extension was loaded. */
export const loads = (marker: string): number => (existsSync(marker) ? readFileSync(marker, "utf8").split("\n").filter(Boolean).length : 0);
