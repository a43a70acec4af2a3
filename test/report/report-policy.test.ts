import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect, test } from "vitest";
import { runReport } from "../../src/report/index.ts";
import { openRunStore, RunRegistry } from "../../src/runs/index.ts";
import { launchChromium, openFile } from "../support/browser.ts";

let dir: string;
let browser: Browser;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "pi-flow-report-policy-"));
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  rmSync(dir, { recursive: true, force: true });
});

test("the page runs its own script and no other: markup that slipped past escaping neither runs nor posts the answers", async () => {
  const store = openRunStore({ home: join(dir, "home"), cwd: dir, sessionId: "s", registry: new RunRegistry() });
  const run = store.create({ kind: "agent", task: { description: "A long answer" }, background: false });
  run.settle({ outcome: "succeeded", value: "The answer, at length. ".repeat(60) });
  await store.idle();
  // What an escaping mistake would let a run put in the page: a script, an inline handler, a form.
  const slipped = `<script>document.title = "script ran"</script><img src="data:," onerror="document.title = 'handler ran'"><form id="leak" action="https://example.com/collect" method="post"><input name="answers" value="all of them"></form>`;
  const file = join(dir, "report.html");
  writeFileSync(file, runReport(store, run.runId).replace("</body>", `${slipped}</body>`));
  const { page, requests } = await openFile(browser, file);
  expect(await page.title()).toMatch(/^pi-flow run /);
  // The page's own script still folds and unfolds.
  await page.getByRole("button", { name: "Unfold every answer" }).click();
  expect(await page.locator("details.fold").getAttribute("open")).toBe("");
  // A click on a slipped-in button would submit the form: it goes nowhere.
  await page.locator("#leak").evaluate((form) => (form as unknown as { submit(): void }).submit());
  await page.waitForTimeout(300);
  expect(requests).toEqual([`file://${file}`]);
});
