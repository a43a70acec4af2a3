// A process-wide store outlives the copy of pi-flow that made it: after an upgrade and a reload in
// one process, the newer copy must not be handed the older copy's store of another shape.
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
