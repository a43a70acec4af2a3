import { expect, test } from "vitest";
import { openRepository } from "../../src/isolation/repository.ts";
import { makeRepo } from "../support/git-repo.ts";

test("checking a child's repository before launch leaves the host's event loop turning while git answers", async () => {
  const root = makeRepo({ "sub/a.txt": "a\n" });
  const turns: string[] = [];
  // Queued before the check starts: it runs while git does, unless the check blocks the loop.
  setImmediate(() => turns.push("event loop"));
  const checking = openRepository(`${root}/sub`).then((repo) => {
    turns.push("repository");
    return repo;
  });
  expect(await checking).toMatchObject({ root, prefix: "sub/" });
  expect(turns).toEqual(["event loop", "repository"]);
});
