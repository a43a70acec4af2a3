// A process-wide store outlives the copy of pi-flow that made it: after an upgrade and a reload in
// one process, the newer copy must not be handed the older copy's store of another shape.
import type { Worker } from "node:worker_threads";
import { afterEach, expect, test, vi } from "vitest";

const OLD_KEY = Symbol.for("pi-flow.pattern-checker");
const holder = globalThis as { [key: symbol]: unknown };
const before = holder[OLD_KEY];
afterEach(() => {
  holder[OLD_KEY] = before;
});

test("a reloaded, newer copy checks answers even though an older copy's checker of another shape is alive", async () => {
  // The checker as the first copies made it: check() only, no run().
  const older = { check: async () => ({ kind: "checked", violation: undefined }) };
  holder[OLD_KEY] = older;
  vi.resetModules();
  const { checkInWorker } = await import("../../src/harnesses/schema-worker.ts");
  const checked = await checkInWorker({ slug: "Not A Slug" }, { type: "object", properties: { slug: { type: "string", pattern: "^[a-z-]+$" } } });
  expect(checked).toMatchObject({ kind: "checked", violation: { pointer: "/slug", message: "expected to match ^[a-z-]+$" } });
  // The older copy still finds its own checker where it left it.
  expect(holder[OLD_KEY]).toBe(older);
});

test("after an upgrade and a reload, the older copy's checker thread is ended, not left alive and idle; the older copy still checks on a thread of its own, ended when it is idle again", async () => {
  const CURRENT_KEY = Symbol.for("pi-flow.pattern-checker#shape3");
  const current = holder[CURRENT_KEY];
  try {
    const olderCopy = await import("../../src/harnesses/schema-worker.ts");
    const older = new olderCopy.SchemaWorker();
    const threadOf = () => Reflect.get(older, "worker") as Worker | null;
    const slug = { type: "string", pattern: "^[a-z-]+$" };
    expect(await olderCopy.checkInWorker("pi-flow", slug, { checker: older })).toEqual({ kind: "checked", violation: undefined });
    const idleThread = threadOf()!;
    const idleThreadExited = new Promise((resolve) => idleThread.once("exit", resolve));
    // The older copy's checker sits under the older shape; the newer copy finds no store of its own shape and makes one.
    holder[OLD_KEY] = older;
    delete holder[CURRENT_KEY];
    vi.resetModules();
    await import("../../src/harnesses/schema-worker.ts");
    expect(threadOf()).toBeNull();
    await idleThreadExited;
    // A run of the older copy still alive checks again, on a new thread, which ends once the check is answered.
    const again = olderCopy.checkInWorker("Not A Slug", slug, { checker: older });
    const busyThread = threadOf()!;
    const busyThreadExited = new Promise((resolve) => busyThread.once("exit", resolve));
    expect(await again).toMatchObject({ kind: "checked", violation: { pointer: "" } });
    await busyThreadExited;
    expect(threadOf()).toBeNull();
  } finally {
    holder[CURRENT_KEY] = current;
  }
});

test("after an upgrade and a reload, the newer copy checks an outputSchema itself even though an older copy's checker, whose thread knows no such job, is alive", async () => {
  // Shape 2's checker, as a copy before outputSchemas were checked in the worker made it: its
  // thread answers every job that is not a generation as a check of a value.
  const SHAPE2_KEY = Symbol.for("pi-flow.pattern-checker#shape2");
  const current = holder[SHAPE2_KEY];
  const older = { run: async (work: { kind: string }) => ({ kind: "answered", answer: { id: 0, type: work.kind === "generate" ? "generated" : "checked", error: null } }) };
  holder[SHAPE2_KEY] = older;
  try {
    vi.resetModules();
    const { outputSchemaProblem } = await import("../../src/harnesses/output-schema-problem.ts");
    expect(await outputSchemaProblem({ type: "object", properties: { verdict: { type: "string" } } })).toBeUndefined();
    expect(await outputSchemaProblem({ type: "strng" })).toMatch(/^outputSchema is not a usable JSON Schema: /);
    expect(holder[SHAPE2_KEY]).toBe(older);
  } finally {
    holder[SHAPE2_KEY] = current;
  }
});
