import { spawn, type ChildProcessByStdio } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { claimSession } from "../../src/harnesses/cli/resume-claims.ts";

const CLAIMER = fileURLToPath(new URL("./fixtures/resume-claimer.ts", import.meta.url));

let dir: string;
type Claimer = ChildProcessByStdio<Writable, Readable, null>;
const started: Claimer[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "pi-flow-claims-"));
});
afterEach(async () => {
  // Each claimer gone before its folder goes: a killed process may still be finishing a write.
  await Promise.all(
    started.splice(0).map((child) => {
      if (child.exitCode !== null || child.signalCode !== null) return undefined;
      const exited = once(child, "exit");
      child.kill("SIGKILL");
      return exited;
    }),
  );
  rmSync(dir, { recursive: true, force: true });
});

/** A claimer process and the lines it writes, one at a time. */
function claimer(thread: string): { child: Claimer; next(): Promise<string> } {
  const child = spawn(process.execPath, [CLAIMER, join(dir, "claims"), thread], { stdio: ["pipe", "pipe", "inherit"] });
  started.push(child);
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  return { child, next: async () => String((await lines.next()).value) };
}

const exited = (child: Claimer) => new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once("exit", () => resolve())));

describe("a codex thread resumed in place is claimed by one process of the host", () => {
  test("two processes claiming one thread together: exactly one proceeds; once it lets go, another can", async () => {
    const claimers = [claimer("thread-1"), claimer("thread-1")];
    for (const one of claimers) expect(await one.next()).toBe("ready");
    for (const one of claimers) one.child.stdin.write("go\n");
    const answers = await Promise.all(claimers.map((one) => one.next()));
    expect(answers.sort()).toEqual(["claimed", "refused"]);
    // This process is a third: refused while the winner holds the thread, then let in.
    expect(claimSession("codex", "thread-1", join(dir, "claims"))).toMatchObject({ refused: expect.stringContaining("codex thread thread-1 is being continued by another run") });
    const winner = claimers[answers.indexOf("claimed") === 0 ? 0 : 1]!;
    for (const one of claimers) one.child.stdin.end();
    await Promise.all(claimers.map((one) => exited(one.child)));
    const mine = claimSession("codex", "thread-1", join(dir, "claims"));
    expect(mine).toHaveProperty("release");
    if ("release" in mine) mine.release();
    expect(winner.child.exitCode).toBe(0);
    expect(readdirSync(join(dir, "claims"))).toEqual([]);
  });

  test("a claim whose process was killed is taken over, by one of two takers", async () => {
    // Started together: each process takes a while to load.
    const [dead, ...takers] = [claimer("thread-2"), claimer("thread-2"), claimer("thread-2")] as const;
    expect(await dead.next()).toBe("ready");
    dead.child.stdin.write("go\n");
    expect(await dead.next()).toBe("claimed");
    dead.child.kill("SIGKILL");
    await exited(dead.child);
    for (const one of takers) expect(await one.next()).toBe("ready");
    for (const one of takers) one.child.stdin.write("go\n");
    expect((await Promise.all(takers.map((one) => one.next()))).sort()).toEqual(["claimed", "refused"]);
  });

  test("another thread is not held by this one's claim", () => {
    const first = claimSession("codex", "thread-a", join(dir, "claims"));
    const second = claimSession("codex", "thread-b", join(dir, "claims"));
    expect(first).toHaveProperty("release");
    expect(second).toHaveProperty("release");
    for (const claim of [first, second]) if ("release" in claim) claim.release();
  });
});
