import { afterEach, expect, test } from "vitest";
import { noteUndeliveredSteer, STEER_UNDELIVERED, SteeringInbox } from "../../src/harnesses/steering.ts";
import { registerSteerTarget, steerRun } from "../../src/orchestrator/child/steer-targets.ts";
import { resolveResume } from "../../src/orchestrator/child/resume-source.ts";
import { sandbox, type Sandbox } from "../runs/helpers.ts";

let box: Sandbox | undefined;
const unregister: ((why: string) => void)[] = [];
afterEach(() => {
  for (const remove of unregister.splice(0)) remove("the test ended");
  box?.cleanup();
});

test("error codes keep their v1 meaning: a steer for a child whose session already ended answers status terminal, not run_not_live", async () => {
  box = sandbox();
  const writer = box.store().create({ kind: "agent", background: true, task: { description: "ending" } });
  const inbox = new SteeringInbox();
  inbox.close(); // the child's session ended; the run settles a moment later
  const recorded: string[] = [];
  unregister.push(registerSteerTarget(writer.runId, { harness: "pi", inbox, record: (message) => void recorded.push(message), refused: () => undefined, undelivered: () => undefined }));
  expect(await steerRun(box.store(), writer.runId, "too late")).toEqual({ runId: writer.runId, status: "terminal", held: false });
  expect(recorded).toEqual([]);
  // Until it settles, a resume is refused as live: so terminal's advice is to wait first, then resume.
  expect(() => resolveResume(writer.runId, box!.store())).toThrow(expect.objectContaining({ code: "request_invalid", message: expect.stringContaining("still live") }));
  writer.settle({ outcome: "succeeded", value: "done" });
});

test("a steer message may hold 32,768 characters; one more is request_invalid and delivers nothing", async () => {
  box = sandbox();
  const writer = box.store().create({ kind: "agent", background: true, task: { description: "listening" } });
  const recorded: string[] = [];
  unregister.push(registerSteerTarget(writer.runId, { harness: "pi", inbox: new SteeringInbox(), record: (message) => void recorded.push(message), refused: () => undefined, undelivered: () => undefined }));
  await expect(steerRun(box!.store(), writer.runId, "y".repeat(32_769))).rejects.toThrow(expect.objectContaining({ code: "request_invalid", message: "message is longer than 32768 characters." }));
  expect(recorded).toEqual([]);
  // Held: the inbox has no session yet, so the message waits for the child to start.
  expect(await steerRun(box.store(), writer.runId, "x".repeat(32_768))).toEqual({ runId: writer.runId, status: "queued", held: true });
  expect(recorded).toEqual(["x".repeat(32_768)]);
  writer.settle({ outcome: "succeeded", value: "done" });
});

test("a steer answered queued (held) for a child that ended before its session started is noted in the run's diagnostics as not delivered", async () => {
  box = sandbox();
  const writer = box.store().create({ kind: "agent", background: true, task: { description: "never started" } });
  const inbox = new SteeringInbox();
  const remove = registerSteerTarget(writer.runId, {
    harness: "pi",
    inbox,
    record: () => undefined,
    refused: () => undefined,
    undelivered: (messages, why) => {
      for (const message of messages) noteUndeliveredSteer(writer, why, message);
    },
  });
  expect(await steerRun(box.store(), writer.runId, "Also check the README.")).toEqual({ runId: writer.runId, status: "queued", held: true });
  remove("the child ended failed before it read it: no model"); // the child settled (its model failed) before any session took the message
  writer.settle({ outcome: "failed", error: { code: "failed", message: "no model" } });
  const diagnostics = box.store().inspectSingle(writer.runId, "diagnostics", { limitBytes: 65536 }).page.text;
  expect(diagnostics).toContain(`warn [${STEER_UNDELIVERED}]: steer not delivered (the child ended failed before it read it: no model): Also check the README.`);
});
