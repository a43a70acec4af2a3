import { expect, test } from "vitest";
import type { FleetChildren, RemoteChildRequest, RemoteChildResult } from "../../src/backends/index.ts";
import { isRemoteChildRequest, isRemoteChildResult } from "../../src/backends/remote-child.ts";
import { runOnFleet } from "../../src/backends/run-on-fleet.ts";
import type { ChildDiagnostic, ChildRequest } from "../../src/harnesses/types.ts";
import { SteeringInbox } from "../../src/harnesses/steering.ts";

const usage = { turns: 1, toolCalls: 0, inputTokens: 10, outputTokens: 5 };

function childRequest(cwd: string, seen: { output: string[]; diagnostics: ChildDiagnostic[] }): ChildRequest {
  return {
    profile: { name: "explorer", description: "d", systemPrompt: "s", defaultContext: { mode: "none" }, source: "builtin" },
    task: { agent: "role:explorer", description: "Part 1" },
    prompt: "Look.",
    cwd,
    loading: { projectTrusted: true, isolated: false },
    signal: new AbortController().signal,
    onProgress: () => undefined,
    onOutput: (text) => seen.output.push(text),
    onDiagnostic: (entry) => seen.diagnostics.push(entry),
  };
}

test("a child's answer from a worker reaches its run through the harness callbacks, and the run notes the worker", async () => {
  const sent: RemoteChildRequest[] = [];
  const answer: RemoteChildResult = { result: { outcome: "succeeded", value: "found it", usage }, output: ["found it"], diagnostics: [{ type: "stub", message: "m" }], worker: "w9" };
  const fleet: FleetChildren = { label: "test", ready: async () => undefined, close: async () => undefined, steer: async () => true, takeUndeliveredSteers: async (_id, note) => note([]), unreadSteers: async () => [], takeSession: async () => undefined, run: async (request, _signal, onTaken) => (sent.push(request), onTaken("w9"), answer) };
  const journal: unknown[] = [];
  const notes: string[] = [];
  let markedRunning = 0;
  const writer = { runId: "ag_1", journal: (line: unknown) => void journal.push(line), appendDiagnostic: (entry: { message: string }) => void notes.push(entry.message), markRunning: () => void markedRunning++, markQueued: () => undefined };
  const seen = { output: [] as string[], diagnostics: [] as ChildDiagnostic[] };
  const result = await runOnFleet(fleet, { workflowId: "wf_1/agent/0", harness: "pi", model: "faux/faux-1", projectCwd: "/p", writer }, childRequest("/p/sub", seen));
  expect(result).toEqual(answer.result);
  expect(sent[0]).toMatchObject({ workflowId: "wf_1/agent/0", runId: "ag_1", cwd: "sub", model: "faux/faux-1" });
  expect(isRemoteChildRequest(sent[0])).toBe(true);
  expect(seen).toEqual({ output: ["found it"], diagnostics: [{ type: "stub", message: "m" }] });
  expect(journal).toEqual([{ t: "event", name: "worker", data: { worker: "w9" } }]);
  expect(notes).toEqual(["ran on worker w9"]);
  expect(markedRunning).toBe(1);
});

test("a child whose folder is outside the project cannot travel to a worker; rows that are not a child request or result are refused", async () => {
  const fleet: FleetChildren = { label: "test", ready: async () => undefined, close: async () => undefined, steer: async () => true, takeUndeliveredSteers: async (_id, note) => note([]), unreadSteers: async () => [], takeSession: async () => undefined, run: async () => Promise.reject(new Error("never sent")) };
  const writer = { runId: "ag_1", journal: () => undefined, appendDiagnostic: () => undefined, markRunning: () => undefined, markQueued: () => undefined };
  const seen = { output: [] as string[], diagnostics: [] as ChildDiagnostic[] };
  await expect(runOnFleet(fleet, { workflowId: "w/agent/0", harness: "pi", model: null, projectCwd: "/p", writer }, childRequest("/elsewhere", seen))).rejects.toThrow(/outside the project/);
  expect(isRemoteChildResult({ result: { outcome: "won", usage }, output: [], diagnostics: [], worker: "w" })).toBe(false);
  expect(isRemoteChildResult({ result: { outcome: "failed", usage }, output: [1], diagnostics: [], worker: "w" })).toBe(false);
  expect(isRemoteChildResult({ result: { outcome: "failed", usage }, output: [], diagnostics: [], worker: "w" })).toBe(true);
  // What the worker left of a pi child's session is a count of entries, or why none.
  expect(isRemoteChildResult({ result: { outcome: "failed", usage }, output: [], diagnostics: [], worker: "w", session: { entries: 4 } })).toBe(true);
  expect(isRemoteChildResult({ result: { outcome: "failed", usage }, output: [], diagnostics: [], worker: "w", session: { unsaved: "why" } })).toBe(true);
  expect(isRemoteChildResult({ result: { outcome: "failed", usage }, output: [], diagnostics: [], worker: "w", session: { entries: "4" } })).toBe(false);
  // A forged row's usage that is not counts, or an error with no message, would corrupt the run's totals and evidence.
  expect(isRemoteChildResult({ result: { outcome: "succeeded", usage: { ...usage, inputTokens: "9" } }, output: [], diagnostics: [], worker: "w" })).toBe(false);
  expect(isRemoteChildResult({ result: { outcome: "succeeded", usage: { ...usage, costUsd: -1 } }, output: [], diagnostics: [], worker: "w" })).toBe(false);
  expect(isRemoteChildResult({ result: { outcome: "succeeded", usage: { turns: 1 } }, output: [], diagnostics: [], worker: "w" })).toBe(false);
  expect(isRemoteChildResult({ result: { outcome: "failed", error: { code: "failed" }, usage }, output: [], diagnostics: [], worker: "w" })).toBe(false);
  expect(isRemoteChildResult({ result: { outcome: "failed", error: { code: "failed", message: "m" }, usage: { ...usage, costUsd: 0.5 } }, output: [], diagnostics: [], worker: "w" })).toBe(true);
  expect(isRemoteChildRequest({ workflowId: "w", runId: "r" })).toBe(false);
});

test("a steer still in the database when a worker's child answers is noted in the run's diagnostics as not delivered, and later steers find the child ended", async () => {
  const database: string[] = [];
  let steered!: () => void;
  const sent = new Promise<void>((resolve) => (steered = resolve));
  const answer: RemoteChildResult = { result: { outcome: "succeeded", value: "done", usage }, output: [], diagnostics: [], worker: "w9" };
  const fleet: FleetChildren = {
    label: "test",
    ready: async () => undefined,
    close: async () => undefined,
    steer: async (_id, message) => (database.push(message), steered(), true),
    takeUndeliveredSteers: async (_id, note) => note(database.splice(0)),
    unreadSteers: async () => [...database],
    takeSession: async () => undefined,
    // The child settles on its worker before the worker's next look takes the steer.
    run: async (_request, _signal, onTaken) => (onTaken("w9"), await sent, answer),
  };
  const journal: unknown[] = [];
  const notes: { code?: string | undefined; message: string }[] = [];
  const writer = { runId: "ag_1", journal: (line: unknown) => void journal.push(line), appendDiagnostic: (entry: { code?: string | undefined; message: string }) => void notes.push(entry), markRunning: () => undefined, markQueued: () => undefined };
  const steering = new SteeringInbox();
  const seen = { output: [] as string[], diagnostics: [] as ChildDiagnostic[] };
  const running = runOnFleet(fleet, { workflowId: "wf_1/agent/0", harness: "pi", model: "faux/faux-1", projectCwd: "/p", writer }, { ...childRequest("/p", seen), steering });
  expect(steering.send("Also check the README.")).toBe(true); // the receipt said queued
  await running;
  expect(notes).toContainEqual({ level: "warn", code: "steer_undelivered", message: expect.stringContaining("steer not delivered (the child answered before it read it, or its harness on the worker takes no steers): Also check the README.") });
  expect(journal).toContainEqual({ t: "event", name: "steer_undelivered", data: { message: "Also check the README.", why: expect.any(String) } });
  expect(database).toEqual([]);
  expect(steering.send("Too late.")).toBe(false); // steerRun answers terminal
});

test("steers a worker's child never read are noted with how it ended: its quota's words, or its stop before any answer", async () => {
  const breach = "The child exceeded its quota maxTurns (1): it started turn 2 and was stopped.";
  const failed: RemoteChildResult = { result: { outcome: "failed", error: { code: "failed", message: breach }, usage }, output: [], diagnostics: [], worker: "w9" };
  const noted = async (run: FleetChildren["run"], signal?: AbortSignal) => {
    const database: string[] = [];
    const fleet: FleetChildren = {
      label: "test",
      ready: async () => undefined,
      close: async () => undefined,
      steer: async (_id, message) => (database.push(message), true),
      takeUndeliveredSteers: async (_id, note) => note(database.splice(0)),
      unreadSteers: async () => [...database],
      takeSession: async () => undefined,
      run,
    };
    const notes: { code?: string | undefined; message: string }[] = [];
    const writer = { runId: "ag_1", journal: () => undefined, appendDiagnostic: (entry: { code?: string | undefined; message: string }) => void notes.push(entry), markRunning: () => undefined, markQueued: () => undefined };
    const steering = new SteeringInbox();
    const request = { ...childRequest("/p", { output: [], diagnostics: [] }), steering, ...(signal ? { signal } : {}) };
    const running = runOnFleet(fleet, { workflowId: "wf_1/agent/0", harness: "pi", model: "faux/faux-1", projectCwd: "/p", writer }, request);
    steering.send("Also check the README.");
    await running.catch(() => undefined);
    return notes.filter((note) => note.code === "steer_undelivered").map((note) => note.message);
  };
  // The child ends on its worker before the worker's next look takes the steer.
  const settles = () => new Promise((resolve) => setImmediate(resolve));
  expect(await noted(async () => (await settles(), failed))).toEqual([`steer not delivered (the child ended failed before it read it: ${breach}): Also check the README.`]);

  const stop = new AbortController();
  const stopped = noted(async (_request, signal) => {
    stop.abort();
    await settles();
    throw signal.reason;
  }, stop.signal);
  expect(await stopped).toEqual(["steer not delivered (the child was stopped before its worker answered, and it had not read it): Also check the README."]);
});

test("a fleet child cancelled with steers it had not read notes each once, when the cancel lands: those its worker had handed over and those still waiting", async () => {
  const handed = ["Handed over."]; // saved with the child's session on its worker
  const waiting: string[] = []; // in the steers table, not taken yet
  let steered!: () => void;
  const sent = new Promise<void>((resolve) => (steered = resolve));
  const fleet: FleetChildren = {
    label: "test",
    ready: async () => undefined,
    close: async () => undefined,
    steer: async (_id, message) => (waiting.push(message), steered(), true),
    takeUndeliveredSteers: async (_id, note) => note(waiting.splice(0)),
    unreadSteers: async () => [...handed, ...waiting],
    takeSession: async () => undefined,
    // Runs until cancelled; the worker gives the handed steer back only later, after this run settled.
    run: (_request, signal) => new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason), { once: true })),
  };
  const notes: { code?: string | undefined; message: string }[] = [];
  const writer = { runId: "ag_1", journal: () => undefined, appendDiagnostic: (entry: { code?: string | undefined; message: string }) => void notes.push(entry), markRunning: () => undefined, markQueued: () => undefined };
  const steering = new SteeringInbox();
  const stop = new AbortController();
  // As launch-child does: a stopped child's inbox closes at once, taking what it had not read.
  stop.signal.addEventListener("abort", () => steering.close(), { once: true });
  const request = { ...childRequest("/p", { output: [], diagnostics: [] }), steering, signal: stop.signal };
  const running = runOnFleet(fleet, { workflowId: "wf_1/agent/0", harness: "pi", model: "faux/faux-1", projectCwd: "/p", writer }, request);
  steering.send("Still waiting.");
  await sent;
  stop.abort();
  await expect(running).rejects.toBeDefined();
  const why = "the child was stopped before its worker answered, and it had not read it";
  expect(notes.filter((note) => note.code === "steer_undelivered").map((note) => note.message)).toEqual([`steer not delivered (${why}): Handed over.`, `steer not delivered (${why}): Still waiting.`]);
  expect(steering.undelivered).toEqual([]); // the run's own note of its inbox says none of them again
});

test("a steer the user sent before the coordinator restarted, left in the database when the child answers, is noted as not delivered by the coordinator that resumed the run", async () => {
  // Sent through the earlier coordinator; its worker put it back at the child's end, unread.
  const database = ["Sent before the restart."];
  const answer: RemoteChildResult = { result: { outcome: "succeeded", value: "done", usage }, output: [], diagnostics: [], worker: "w9" };
  const fleet: FleetChildren = {
    label: "test",
    ready: async () => undefined,
    close: async () => undefined,
    steer: async () => true,
    takeUndeliveredSteers: async (_id, note) => note(database.splice(0)),
    unreadSteers: async () => [...database],
    takeSession: async () => undefined,
    run: async (_request, _signal, onTaken) => (onTaken("w9"), answer),
  };
  const notes: { code?: string | undefined; message: string }[] = [];
  const writer = { runId: "ag_1", journal: () => undefined, appendDiagnostic: (entry: { code?: string | undefined; message: string }) => void notes.push(entry), markRunning: () => undefined, markQueued: () => undefined };
  const seen = { output: [] as string[], diagnostics: [] as ChildDiagnostic[] };
  await runOnFleet(fleet, { workflowId: "wf_1/agent/0", harness: "pi", model: "faux/faux-1", projectCwd: "/p", writer }, { ...childRequest("/p", seen), steering: new SteeringInbox() });
  expect(notes).toContainEqual({ level: "warn", code: "steer_undelivered", message: expect.stringContaining("steer not delivered (the child answered before it read it, or its harness on the worker takes no steers): Sent before the restart.") });
  expect(database).toEqual([]);

  // A database that cannot be read then says nothing for a child this coordinator never steered.
  const away: FleetChildren = { ...fleet, takeUndeliveredSteers: async () => Promise.reject(new Error("ECONNREFUSED")) };
  const quiet: { message: string }[] = [];
  const quietWriter = { ...writer, appendDiagnostic: (entry: { message: string }) => void quiet.push(entry) };
  await runOnFleet(away, { workflowId: "wf_1/agent/0", harness: "pi", model: "faux/faux-1", projectCwd: "/p", writer: quietWriter }, { ...childRequest("/p", seen), steering: new SteeringInbox() });
  expect(quiet.map((entry) => entry.message)).toEqual(["ran on worker w9"]);
});
