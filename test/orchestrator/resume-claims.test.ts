import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { Worker } from "node:worker_threads";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { claimRunDirectory } from "../../src/orchestrator/workflow/resume/claims.ts";
import type { RaceResult, RaceRound } from "./fixtures/claim-racer.ts";

/**
 * A resume claim left by a process that died before its run started is taken over, and any number
 * of resumes taking it over at once have exactly one winner: the rest are refused as "being resumed".
 */

const RACER = new URL("./fixtures/claim-racer.ts", import.meta.url);
const RUN_ID = "run_20260101T000000Z_racedclaim";
const CONTENDERS = 6;
const ROUNDS = 4;

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "pi-flow-claims-"));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** The pid of a process of this host that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
  return Number(child.stdout);
}

/** Run directories, each holding a claim whose process is gone. */
function staleRounds(count: number): RaceRound[] {
  const pid = deadPid();
  return Array.from({ length: count }, (_, index) => {
    const dir = join(root, `round-${index}`);
    mkdirSync(dir);
    writeFileSync(join(dir, "resumed-by.json"), JSON.stringify({ pid, host: hostname() }));
    return { dir, runId: RUN_ID };
  });
}

function winnersPerRound(results: RaceResult[]): number[] {
  const winners = Array.from({ length: ROUNDS }, () => 0);
  for (const result of results) if (result.won) winners[result.round]!++;
  return winners;
}

/** Worker threads of this process, released together at a shared barrier each round. */
async function raceInThreads(rounds: RaceRound[]): Promise<RaceResult[]> {
  const gates = new SharedArrayBuffer(4 * rounds.length);
  const open = new Int32Array(gates);
  const ready = Array.from({ length: rounds.length }, () => 0);
  const results: RaceResult[] = [];
  const workers = Array.from({ length: CONTENDERS }, () => new Worker(RACER, { workerData: { rounds, gates } }));
  await Promise.all(
    workers.map(
      (worker) =>
        new Promise<void>((resolve, reject) => {
          worker.on("error", reject);
          worker.on("exit", () => resolve());
          worker.on("message", (message: RaceResult | { ready: number }) => {
            if (!("ready" in message)) return void results.push(message);
            if (++ready[message.ready]! < CONTENDERS) return;
            Atomics.store(open, message.ready, 1);
            Atomics.notify(open, message.ready);
          });
        }),
    ),
  );
  return results;
}

/** Child processes, each given the round's line on stdin once every one of them is ready. */
async function raceInProcesses(rounds: RaceRound[]): Promise<RaceResult[]> {
  const results: RaceResult[] = [];
  const ready = Array.from({ length: rounds.length + 1 }, () => 0);
  const children: ChildProcessWithoutNullStreams[] = Array.from({ length: CONTENDERS }, () => spawn(process.execPath, [RACER.pathname]));
  let release!: () => void;
  let fail!: (error: Error) => void;
  const done = new Promise<void>((resolve, reject) => ((release = resolve), (fail = reject)));
  for (const child of children) {
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.once("exit", (code) => (code === 0 ? undefined : fail(new Error(`a contender exited with ${code}: ${stderr}`))));
    createInterface({ input: child.stdout }).on("line", (line) => {
      const message = JSON.parse(line) as RaceResult | { ready: number };
      if (!("ready" in message)) return void results.push(message);
      if (++ready[message.ready]! < CONTENDERS) return;
      if (message.ready === rounds.length) return release();
      for (const each of children) each.stdin.write(`${JSON.stringify(rounds[message.ready])}\n`);
    });
  }
  await done;
  await Promise.all(children.map((child) => new Promise((resolve) => (child.once("exit", resolve), child.stdin.end()))));
  return results;
}

describe("resume claims", () => {
  test("racing takeovers of a dead process's claim in one process's threads: exactly one wins each time", async () => {
    const rounds = staleRounds(ROUNDS);
    const results = await raceInThreads(rounds);
    expect(results).toHaveLength(CONTENDERS * ROUNDS);
    expect(winnersPerRound(results)).toEqual(Array.from({ length: ROUNDS }, () => 1));
    for (const result of results) {
      if (!result.won) expect(result).toMatchObject({ code: "request_invalid", message: expect.stringContaining("being resumed right now") });
    }
  });

  test("takeovers interleaved so that every one has read the dead claim before any takes it: one wins", () => {
    const [{ dir }] = staleRounds(1) as [RaceRound];
    const outcomes: string[] = [];
    // Each contender, just before its takeover, lets the next one run up to the same point.
    const contend = (index: number): void => {
      try {
        claimRunDirectory(dir, RUN_ID, { beforeTakeover: () => (index + 1 < CONTENDERS ? contend(index + 1) : undefined) });
        outcomes.push("won");
      } catch (error) {
        outcomes.push((error as Error).message);
      }
    };
    contend(0);
    expect(outcomes.filter((outcome) => outcome === "won")).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome.includes("being resumed right now"))).toHaveLength(CONTENDERS - 1);
  });

  test("a resume that found a dead claim long ago cannot take it once two later takeovers passed it", () => {
    const [{ dir }] = staleRounds(1) as [RaceRound];
    const slow = () =>
      claimRunDirectory(dir, RUN_ID, {
        beforeTakeover: () => {
          // Meanwhile another resume takes the dead claim over and dies, and a third takes over from it.
          claimRunDirectory(dir, RUN_ID);
          writeFileSync(join(dir, "resumed-by.1.json"), JSON.stringify({ pid: deadPid(), host: hostname() }));
          claimRunDirectory(dir, RUN_ID);
        },
      });
    expect(slow).toThrow(/being resumed right now/);
    expect(readdirSync(dir).sort()).toEqual(["resumed-by.1.json", "resumed-by.2.json", "resumed-by.json"]);
  });

  test("racing takeovers from many processes: exactly one wins each time", async () => {
    const results = await raceInProcesses(staleRounds(ROUNDS));
    expect(results).toHaveLength(CONTENDERS * ROUNDS);
    expect(winnersPerRound(results)).toEqual(Array.from({ length: ROUNDS }, () => 1));
  });

  test("the winner's started run is named to every later resume; a released claim may be taken again", () => {
    const [{ dir }] = staleRounds(1) as [RaceRound];
    const claim = claimRunDirectory(dir, RUN_ID);
    expect(() => claimRunDirectory(dir, RUN_ID)).toThrow(/being resumed right now/);
    claim.release();
    const again = claimRunDirectory(dir, RUN_ID);
    again.started("run_20260101T000001Z_continuing");
    expect(() => claimRunDirectory(dir, RUN_ID)).toThrow(/already resumed by run_20260101T000001Z_continuing/);
    // The dead claim and the one naming the continuing run are left, whole, and no staged copy.
    expect(readdirSync(dir).sort()).toEqual(["resumed-by.1.json", "resumed-by.json"]);
    expect(JSON.parse(readFileSync(join(dir, "resumed-by.1.json"), "utf8"))).toMatchObject({ runId: "run_20260101T000001Z_continuing" });
  });
});
