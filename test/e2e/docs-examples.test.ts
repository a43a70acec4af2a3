import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { childAnswers } from "../support/children.ts";
import { pathWithFakes } from "../support/fake-cli.ts";
import { PROJECT_ROOT, startPiSession, type PiTestSession } from "../support/pi-session.ts";

/**
 * Every ```js block in the docs whose first line is `// codemode example…` runs here, verbatim, in
 * native codemode in a real Pi session (children answer through Pi's faux model, or the fake
 * claude and codex CLIs on PATH). ```ts blocks in the docs are API references (signatures), not examples.
 */
const docs = [join(PROJECT_ROOT, "README.md"), ...readdirSync(join(PROJECT_ROOT, "docs")).map((name) => join(PROJECT_ROOT, "docs", name))];
const examples = docs.flatMap((path) =>
  [...readFileSync(path, "utf8").matchAll(/```js\n(\/\/ codemode example[^\n]*\n[\s\S]*?)```/g)].map((match, index) => ({
    name: `${path.slice(PROJECT_ROOT.length + 1)} #${index + 1}`,
    code: match[1]!,
  })),
);

let pi: PiTestSession;
beforeAll(async () => {
  pi = await startPiSession({ env: { PATH: pathWithFakes() } });
});
afterAll(() => pi.dispose());

test("the docs have codemode examples", () => {
  expect(examples.length).toBeGreaterThan(0);
});

test.each(examples)("$name runs and returns a successful result", async ({ code }) => {
  const children = Array.from({ length: 8 }, (_, index) => childAnswers(`child answer ${index + 1}`));
  const outcome = await pi.runCodemode(code, { verbatim: true, children });
  expect(outcome.text).toMatch(/^Script completed/);
  expect(outcome.value).toBeDefined();
  expect(outcome.value).not.toMatchObject({ ok: false });
});
