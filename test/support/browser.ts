/**
 * Real headless Chromium (Debian's `chromium`, which .ci/run installs when it is missing) driven by
 * playwright-core: a page opened from a file, with every request it makes and every console error
 * it logs recorded, so a test can say that nothing left the page and nothing failed in it.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { PROJECT_ROOT } from "./pi-session.ts";

export const CHROMIUM = process.env.PI_FLOW_CHROMIUM ?? "/usr/bin/chromium";
/** Git-ignored: screenshots for a person to look at after a run of the tests. */
export const TEST_OUTPUT = join(PROJECT_ROOT, "test-output");

export function launchChromium(): Promise<Browser> {
  // --no-sandbox: CI runs as root, where Chromium's own sandbox refuses to start.
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox", "--disable-gpu"] });
}

export interface OpenedPage {
  page: Page;
  /** Every URL the page asked for, the file itself included. */
  requests: string[];
  consoleErrors: string[];
}

export async function openFile(browser: Browser, path: string, viewport = { width: 1400, height: 900 }): Promise<OpenedPage> {
  const page = await browser.newPage({ viewport });
  const requests: string[] = [];
  const consoleErrors: string[] = [];
  page.on("request", (request) => requests.push(request.url()));
  page.on("console", (message) => {
    if (message.type() === "error") consoleErrors.push(message.text());
  });
  page.on("pageerror", (error) => consoleErrors.push(error.message));
  await page.goto(`file://${path}`, { waitUntil: "load" });
  return { page, requests, consoleErrors };
}

export function screenshotPath(name: string): string {
  mkdirSync(TEST_OUTPUT, { recursive: true });
  return join(TEST_OUTPUT, name);
}
