import { expect, test } from "vitest";
import { contentText } from "../../src/parent-context/content-text.ts";

test("content text: strings as they are, text parts joined, other parts left out unless images are asked for", () => {
  const parts = [{ type: "text", text: "one" }, { type: "image", data: "…" }, { type: "toolCall", name: "ls" }, { type: "text", text: "two" }];
  expect(contentText("plain")).toBe("plain");
  expect(contentText(parts)).toBe("onetwo");
  expect(contentText(parts, { separator: "\n", images: true })).toBe("one\n[image]\ntwo");
  expect(contentText(undefined)).toBe("");
});
