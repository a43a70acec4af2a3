/**
 * The real interactive `pi`, in a pseudo-terminal: pi-flow loaded from its manifest (-e <package>),
 * Pi's faux model loaded beside it. `script` (util-linux) provides the terminal and
 * @xterm/headless reads the screen as a person would see it; PI_OFFLINE keeps Pi from fetching
 * fd and ripgrep. Every wait is on the screen's content, which changes only as Pi draws.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import xterm from "@xterm/headless";
import { afterAll, beforeAll, expect, test } from "vitest";
import { PROJECT_ROOT } from "../support/pi-session.ts";

const COLS = 100;
const ROWS = 32;
const dir = mkdtempSync(join(tmpdir(), "pi-flow-tui-"));
const cli = join(PROJECT_ROOT, "node_modules/@earendil-works/pi-coding-agent/dist/cli.js");
let pi: ChildProcessWithoutNullStreams;
const term = new xterm.Terminal({ cols: COLS, rows: ROWS, allowProposedApi: true });
const listeners = new Set<() => void>();

function screen(): string {
  const buffer = term.buffer.active;
  const lines: string[] = [];
  for (let row = 0; row < ROWS; row++) lines.push(buffer.getLine(buffer.viewportY + row)?.translateToString(true) ?? "");
  return lines.join("\n");
}

/** Resolves once the screen satisfies `check`, re-checked each time Pi draws. */
function untilScreen(check: (text: string) => boolean): Promise<string> {
  return new Promise((resolve) => {
    const recheck = () => {
      const text = screen();
      if (!check(text)) return;
      listeners.delete(recheck);
      resolve(text);
    };
    listeners.add(recheck);
    recheck();
  });
}

beforeAll(() => {
  const quote = (text: string) => `'${text.replace(/'/g, "'\\''")}'`;
  const command = [
    `stty cols ${COLS} rows ${ROWS};`,
    "exec",
    quote(process.execPath),
    quote(cli),
    "-e",
    quote(PROJECT_ROOT),
    "-e",
    quote(join(PROJECT_ROOT, "test/fixtures/tui/faux-model.ts")),
    "--provider faux --model faux-1 --api-key test --no-session",
  ].join(" ");
  pi = spawn("script", ["-qfec", command, "/dev/null"], {
    cwd: dir,
    env: { ...process.env, TERM: "xterm-256color", PI_OFFLINE: "1", PI_CODING_AGENT_DIR: join(dir, "agent"), PI_FLOW_HOME: join(dir, "flow"), PI_FLOW_TUI_RELEASE: join(dir, "release") },
  });
  pi.stdout.on("data", (data: Buffer) => term.write(data, () => listeners.forEach((listener) => listener())));
});

afterAll(async () => {
  // SIGTERM: script passes it on and exits only once Pi has ended (its session_shutdown done). A
  // SIGKILLed script left Pi to end on the SIGHUP of its closed terminal, writing in the folder
  // while it was being removed.
  if (pi.exitCode === null && pi.signalCode === null) {
    const exited = once(pi, "exit");
    pi.kill("SIGTERM");
    await exited;
  }
  term.dispose();
  rmSync(dir, { recursive: true, force: true });
});

test("in the interactive TUI: pi-flow is listed by name, its tool row renders, and the background widget comes and goes", { timeout: 120_000 }, async () => {
  const started = await untilScreen((text) => text.includes("[Extensions]") && text.includes("faux-1"));
  // Loaded from a path, Pi names the extension after the package's folder, never "src".
  const listed = started.split("\n")[started.split("\n").findIndex((line) => line.includes("[Extensions]")) + 1] ?? "";
  // Pi sorts the names, so the order depends on the folder a checkout happens to be in.
  expect(listed.trim().split(", ").sort()).toEqual(["faux-model.ts", basename(PROJECT_ROOT)].sort());

  pi.stdin.write("count the files\r");
  const running = await untilScreen((text) => text.includes("flow: 1 background run"));
  expect(running).toMatch(/↗ Delegate explorer Count the files background/);
  // The widget: the run, what it is doing, and for how long.
  expect(running).toMatch(/… Delegate explorer Count the files .*\d+(\.\d)?m?s/);

  writeFileSync(join(dir, "release"), "");
  const done = await untilScreen((text) => text.includes("✓ Background delegate explorer Count the files") && !text.includes("flow: 1 background run"));
  expect(done).toMatch(/✓ Background delegate explorer Count the files [\d.]+m?s · [\d.]+k? tok \$\d/);
  expect(done).not.toMatch(/… Delegate explorer Count the files/);
});

test("in the interactive TUI: /flow doctor typed whole runs with one Enter; the argument menu does not swallow it", { timeout: 120_000 }, async () => {
  await untilScreen((text) => text.includes("faux-1"));
  pi.stdin.write("/flow doctor");
  // Wait until Pi has drawn what was typed (and any argument menu), then press Enter once.
  await untilScreen((text) => text.includes("/flow doctor"));
  pi.stdin.write("\r");
  const shown = await untilScreen((text) => /node {5}v\d+/.test(text));
  expect(shown).toMatch(/pi {7}\d+\.\d+/);
});
