import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { flowInProcess } from "./in-process.ts";
import { flowSandbox, PROJECT_ROOT, shell, userShellEnv } from "./support.ts";

/**
 * The commands the README, docs/cli.md and examples/cassettes/README.md tell a user to type,
 * parsed from those files and run as written in the checkout's root: the README's through a shell
 * with npx as a user runs it, the others' words split by a shell and run by flow's main. The
 * sandbox keeps their runs and Pi's agent directory out of the real home.
 */
const sandbox = flowSandbox();
afterAll(() => sandbox.dispose());

const read = (path: string) => readFileSync(join(PROJECT_ROOT, path), "utf8");

/** The lines of each ```sh block in `markdown`, in order, comments stripped. */
function shellBlocks(markdown: string): string[][] {
  return [...markdown.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) =>
    match[1]!
      .split("\n")
      .map((line) => line.replace(/\s+#.*$/, "").trim())
      .filter((line) => line !== ""),
  );
}

const README = read("README.md");
const tryIt = README.slice(README.indexOf("## Try it"), README.indexOf("\n## ", README.indexOf("## Try it") + 1));
const [firstBlock = [], modelBlock = [], testBlock = []] = shellBlocks(tryIt);

describe("README: Try it", () => {
  test("opens the README and gives a fresh machine its commands in order: install, replay, the same on a model, npm test", () => {
    expect(README.slice(README.indexOf("\n## ") + 1)).toMatch(/^## Try it\n/); // the first section
    expect(firstBlock[0]).toBe("npm install");
    expect(firstBlock[1]).toMatch(/^npx flow run review .* --replay examples\/cassettes\/review\.jsonl$/);
    expect(modelBlock).toEqual([firstBlock[1]!.replace(/ --replay \S+$/, "")]);
    expect(testBlock).toEqual(["npm test"]);
  });

  test("the Try it command, run verbatim, shows the review's progress and prints its result, with no credentials", async () => {
    const result = await shell(firstBlock[1]!, { env: sandbox.env });
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/^run wf_\S+ started: review$/m);
    expect(result.stderr).toMatch(/^child 4 succeeded: Synthesize the review/m);
    const value = JSON.parse(result.stdout) as { reviews: { lens: string; verdict: string }[]; synthesis: { verdict: string } };
    expect(value.reviews.map((review) => review.lens)).toEqual(["correctness", "tests", "simplicity"]);
    expect(value.synthesis.verdict).toMatch(/^Request changes\./);
    // The hint it ends with works when pasted where the user stands.
    const hint = /Inspect it with: (.+)$/m.exec(result.stderr)?.[1];
    expect(hint).toMatch(/^npx flow runs show wf_\S+ --cwd examples\/quickstart$/);
    const shown = await shell(hint!, { env: sandbox.env });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(/^run wf_\S+ started/m.exec(result.stderr)?.[0].split(" ")[1]);
  });
});

describe("npm's own output", () => {
  // npm runs on the system Node (often older than 22.19), flow on the Node 22 that npm install
  // put in node_modules/.bin. The project's .npmrc keeps npm's engine warnings out of the way.
  test("npx flow, started as a user starts it from a shell, prints nothing of npm's before its own output", async () => {
    const result = await shell("npx flow --help", { env: userShellEnv(sandbox) });
    expect(result.stderr).not.toMatch(/npm (warn|WARN)/);
    expect(result.stderr).toBe("");
    expect(result.stdout).toMatch(/^flow: run pi-flow workflows/);
    expect(result.code).toBe(0);
  });
});

// Every flow command in these files' shell blocks needs no model: each must run as written.
const documented = ["docs/cli.md", "examples/cassettes/README.md"].flatMap((file) =>
  shellBlocks(read(file))
    .flat()
    .filter((line) => line.startsWith("npx flow "))
    .map((line) => [file, line] as const),
);

describe("README: your own workflow", () => {
  // The paragraph after Try it names a workflow file to copy and the command that runs it with no model.
  const own = README.slice(README.indexOf("Your own workflow runs with no model too"), README.indexOf("## What pi-flow is"));
  const file = /\]\((examples\/[\w/-]+\.js)\)/.exec(own)?.[1] ?? "";
  const command = /`(npx flow run \S+ --stub)`/.exec(own)?.[1] ?? "";

  test("the file it names has the exports it says, and its --stub command is one docs/cli.md's block runs (below)", () => {
    expect(command).toBe(`npx flow run ${file} --stub`);
    expect(read(file)).toMatch(/^export const apiVersion = 1;\nexport const meta = \{[\s\S]*\n {2}description: "[^"]+"[\s\S]*\nexport default async function \w*\(\{ args \}\) \{/m);
    // There with --seed 1, which only changes the generated values.
    expect(documented.map(([, line]) => line)).toContain(`${command} --seed 1`);
  });
});

describe("documented commands", () => {
  test("there are some: the three shipped cassettes and the other commands", () => {
    const replays = documented.filter(([, line]) => line.includes("--replay examples/cassettes/"));
    expect(new Set(replays.map(([, line]) => /--replay examples\/cassettes\/(\w+)\.jsonl/.exec(line)?.[1]))).toEqual(new Set(["review", "map", "handoff"]));
  });

  // The shell splits each line into flow's arguments, as it would for npx; flow's main then runs
  // in this process (the two tests above start npx flow itself, verbatim).
  // Each distinct command once: the review replay stands in both files and is the README's Try it
  // command, which "README: Try it" above already runs verbatim through npx, checking more.
  const distinct = documented.filter(([, line], index) => line !== firstBlock[1] && documented.findIndex(([, other]) => other === line) === index);
  test("the review replay the docs repeat is the one README: Try it runs", () => {
    expect(documented.filter(([, line]) => line === firstBlock[1]).map(([file]) => file)).toEqual(["docs/cli.md", "examples/cassettes/README.md"]);
    expect(distinct.length).toBe(new Set(documented.map(([, line]) => line)).size - 1);
  });

  test.each(distinct)("%s: %s", async (_file, line) => {
    const words = await shell(`printf '%s\\0' ${line.slice("npx flow ".length)}`, { env: sandbox.env });
    expect(words.code).toBe(0);
    const result = await flowInProcess(words.stdout.split("\0").slice(0, -1), { env: sandbox.env });
    expect(result.stderr).not.toMatch(/has no answer for/);
    expect(result.code).toBe(0);
    if (line.includes(" run ")) {
      expect(result.stderr).toMatch(/^run wf_\S+ succeeded in /m);
      expect(() => JSON.parse(result.stdout) as unknown).not.toThrow();
    }
  });
});
