import * as fs from "node:fs";
import { afterAll, expect, test, vi } from "vitest";
import { startCliProcess } from "../../src/harnesses/cli/process.ts";

/** Every listing of /proc the harness makes: each is a read of every process on the machine. */
const procListings = vi.hoisted(() => ({ count: 0 }));
vi.mock("node:fs", async (importOriginal) => {
  const real = await importOriginal<typeof fs>();
  const readdirSync = ((path: fs.PathLike, ...rest: unknown[]) => {
    if (path === "/proc") procListings.count++;
    return (real.readdirSync as (...args: unknown[]) => unknown)(path, ...rest);
  }) as typeof real.readdirSync;
  return { ...real, default: { ...real, readdirSync }, readdirSync };
});

let stubborn: number | undefined;
afterAll(() => {
  vi.restoreAllMocks();
  if (stubborn === undefined) return;
  // The grandchild may be gone already (a busy machine's reaper, or the harness's own last SIGKILL): nothing is left to stop.
  try {
    process.kill(stubborn, "SIGKILL");
  } catch (error) {
    if ((error as { code?: string }).code !== "ESRCH") throw error;
  }
});

test("stopping a CLI child lists /proc once per signal, then checks only the tagged processes it found until they are gone", async () => {
  // The child starts a grandchild in a session of its own (out of the group, still tagged) and says its pid.
  const child = startCliProcess({
    command: "sh",
    args: ["-c", "setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $!; exec sleep 1000"],
    cwd: process.cwd(),
    env: process.env,
    stdin: "",
    killGraceMs: 1000,
    maxLineBytes: 1024,
    maxStderrBytes: 1024,
    onLine: (line) => {
      stubborn = Number(line);
      // The grandchild shrugs off every signal (as one stuck in the kernel would): the wait for it runs to its deadline.
      const kill = process.kill.bind(process);
      vi.spyOn(process, "kill").mockImplementation((pid: number, signal?: string | number) => (pid === stubborn && signal !== 0 ? true : kill(pid, signal)));
      procListings.count = 0;
      child.stop("the test stopped it");
    },
  });
  const exit = await child.exited;
  expect(exit.stopped).toBe("the test stopped it");
  // SIGTERM, SIGKILL and the checks as the child settles list /proc; the second's wait after SIGKILL does not.
  expect(procListings.count).toBeLessThanOrEqual(5);
  expect(stubborn).toBeGreaterThan(0);
});
