import { expect, test } from "vitest";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import piFlow from "../../src/index.ts";
import { inChildSessionContext, runInChildSessionContext } from "../../src/harnesses/child-context.ts";

/** Records registrations: tools by name, commands as "/name", renderers as "renderer:type". */
function recordingApi() {
  const registered: string[] = [];
  const api = {
    registerTool: (tool: { name: string }) => registered.push(tool.name),
    registerCommand: (name: string) => registered.push(`/${name}`),
    registerMessageRenderer: (type: string) => registered.push(`renderer:${type}`),
    registerEntryRenderer: (type: string) => registered.push(`renderer:${type}`),
    getAllTools: () => [],
    on: () => () => {},
  };
  return { api: api as unknown as ExtensionAPI, registered };
}

test("the factory registers pi-flow's tools at the top level", () => {
  const { api, registered } = recordingApi();
  piFlow(api);
  expect(registered).toContain("external_help");
  expect(registered).toContain("/flow");
  expect(registered).toContain("renderer:pi-flow-run-completed");
  expect(registered).toContain("renderer:pi-flow-runs-completed");
});

test("inside a child session being built, the factory installs nothing", async () => {
  const { api, registered } = recordingApi();
  await runInChildSessionContext(async () => {
    await new Promise((resolve) => setImmediate(resolve));
    expect(inChildSessionContext()).toBe(true);
    piFlow(api);
  });
  expect(registered).toEqual([]);
});

test("the child mark belongs to its async branch only and is gone afterwards", async () => {
  let outsideSawMark = true;
  const child = runInChildSessionContext(async () => {
    await new Promise((resolve) => setTimeout(resolve, 5));
    return inChildSessionContext();
  });
  const outside = (async () => {
    await new Promise((resolve) => setTimeout(resolve, 1));
    outsideSawMark = inChildSessionContext();
  })();
  await outside;
  expect(await child).toBe(true);
  expect(outsideSawMark).toBe(false);
  expect(inChildSessionContext()).toBe(false);
});
