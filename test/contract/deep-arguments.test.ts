import { expect, test } from "vitest";
import { MAX_ARGUMENT_DEPTH, TOO_DEEP_ARGUMENT, withoutTooDeepArguments } from "../../src/contract/deep-arguments.ts";

const nested = (levels: number): unknown => JSON.parse(`${"[".repeat(levels)}${"]".repeat(levels)}`);
const assistant = (name: string, args: Record<string, unknown>) => ({ role: "assistant", content: [{ type: "text", text: "calling" }, { type: "toolCall", id: "c1", name, arguments: args }] });

test("only a pi-flow tool's argument nested past MAX_ARGUMENT_DEPTH is replaced by the note; the others, and other tools' calls, stay as the model wrote them", () => {
  const args = { workflow: "review", args: { tree: nested(MAX_ARGUMENT_DEPTH + 1) }, background: true };
  const replaced = withoutTooDeepArguments(assistant("external_workflow", args));
  expect(replaced?.content).toEqual([{ type: "text", text: "calling" }, { type: "toolCall", id: "c1", name: "external_workflow", arguments: { workflow: "review", args: TOO_DEEP_ARGUMENT, background: true } }]);
  expect(withoutTooDeepArguments(assistant("external_workflow", { args: { tree: nested(MAX_ARGUMENT_DEPTH - 1) } }))).toBeUndefined();
  expect(withoutTooDeepArguments(assistant("someone_elses_tool", args))).toBeUndefined();
  expect(withoutTooDeepArguments({ role: "user" })).toBeUndefined();
});
