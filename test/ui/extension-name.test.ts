import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { DefaultResourceLoader, InteractiveMode } from "@earendil-works/pi-coding-agent";
import { expect, test } from "vitest";
import { PROJECT_ROOT } from "../support/pi-session.ts";

interface Listed {
  path: string;
  sourceInfo: { source: string; scope: string; origin: string; baseDir?: string };
}

/** The label Pi's interactive mode shows for each loaded extension (its own, private, code). */
function labelsOf(extensions: Listed[]): string[] {
  const mode = Object.create(InteractiveMode.prototype) as { getCompactExtensionLabels(list: Listed[]): string[] };
  if (typeof mode.getCompactExtensionLabels !== "function") throw new Error("Pi no longer labels extensions with getCompactExtensionLabels: look again at how it names them");
  return mode.getCompactExtensionLabels(extensions);
}

test("Pi lists the extension as pi-flow (or its checkout's folder), never as src", async () => {
  const cwd = mkdtempSync(join(tmpdir(), "pi-flow-name-"));
  try {
    const loader = new DefaultResourceLoader({ cwd, agentDir: join(cwd, ".agent"), additionalExtensionPaths: [PROJECT_ROOT], noSkills: true, noPromptTemplates: true, noThemes: true });
    await loader.reload();
    const loaded = loader.getExtensions().extensions.filter((extension) => extension.path.startsWith(PROJECT_ROOT)) as unknown as Listed[];
    expect(loaded).toHaveLength(1);
    // Loaded from a path (pi -e ./pi-flow): the folder it was checked out to.
    expect(labelsOf(loaded)).toEqual([basename(PROJECT_ROOT)]);
    // Installed from npm (pi install npm:pi-flow): the package's name.
    const fromNpm = loaded.map((extension) => ({ ...extension, sourceInfo: { source: "npm:pi-flow", scope: "user", origin: "package", baseDir: PROJECT_ROOT } }));
    expect(labelsOf(fromNpm)).toEqual(["pi-flow"]);
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
});
