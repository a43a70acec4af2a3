// A child's `.gitattributes` never steers how an apply writes the user's files: no filter program
// the user's git config defines runs because the child named it, and no eol or ident conversion
// the child switched on changes the bytes written. Real git, a real user-level filter.
import { existsSync, mkdtempSync, readFileSync, readlinkSync, realpathSync, rmSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { applyChanges } from "../../src/isolation/apply.ts";
import { openRepository } from "../../src/isolation/repository.ts";
import { createIsolation, settleIsolation } from "../../src/isolation/worktree.ts";
import { gitIn, makeRepo, writeIn } from "../support/git-repo.ts";
import { worktreePatch } from "../../src/isolation/worktree-patch.ts";

const home = realpathSync(mkdtempSync(join(tmpdir(), "pi-flow-home-")));
let next = 0;
const runId = () => `r-attr${String(next++).padStart(4, "0")}`;

describe("a child's .gitattributes, applied", () => {
  const proof = join(home, "smudge-ran");
  const config = join(home, "gitconfig");
  let before: string | undefined;
  beforeEach(() => {
    rmSync(proof, { force: true });
    // A filter the user configured for files of their own: its smudge program leaves a mark when run.
    writeFileSync(config, `[filter "mark"]\n\tsmudge = "touch ${proof}; cat"\n\tclean = cat\n`);
    before = process.env.GIT_CONFIG_GLOBAL;
    process.env.GIT_CONFIG_GLOBAL = config;
  });
  afterEach(() => {
    if (before === undefined) delete process.env.GIT_CONFIG_GLOBAL;
    else process.env.GIT_CONFIG_GLOBAL = before;
  });

  it("keeping a child's changes runs no clean program its attributes name: its files are kept byte for byte, as its patch for a cassette is", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const cleaned = join(home, "clean-ran");
    writeFileSync(config, `[filter "mark"]\n\tclean = "touch ${cleaned}; tr a-z A-Z"\n\tsmudge = cat\n`);
    rmSync(cleaned, { force: true });
    const isolation = await createIsolation(await openRepository(root), runId(), home);
    writeIn(isolation.path, { ".gitattributes": "* filter=mark\n", "sub/.gitattributes": "*.txt eol=crlf\n", "a.txt": "child a\n", "sub/b.txt": "b\n", "lib/c.txt": "c\n", "odd\nname/.gitattributes": "* filter=mark\n", "odd\nname/d.txt": "d\n" });
    symlinkSync("* filter=mark", join(isolation.path, "lib/.gitattributes")); // git reads a staged link's target as attributes
    const patch = await worktreePatch({ ...isolation, base: isolation.base });
    expect(existsSync(cleaned)).toBe(false);
    expect(patch!.toString("utf8")).toContain("+child a\n");
    await settleIsolation(isolation, home);
    expect(existsSync(cleaned)).toBe(false);
    const kept = `refs/pi-flow/${isolation.runId}`;
    expect(gitIn(root, "cat-file", "blob", `${kept}:a.txt`)).toBe("child a");
    expect(gitIn(root, "cat-file", "blob", `${kept}:.gitattributes`)).toBe("* filter=mark");
    expect(gitIn(root, "cat-file", "blob", `${kept}:sub/.gitattributes`)).toBe("*.txt eol=crlf");
    expect(gitIn(root, "cat-file", "blob", `${kept}:sub/b.txt`)).toBe("b");
    expect(gitIn(root, "cat-file", "blob", `${kept}:lib/c.txt`)).toBe("c");
    expect(gitIn(root, "ls-tree", kept, "lib/.gitattributes")).toMatch(/^120000 blob /);
    expect(gitIn(root, "cat-file", "blob", `${kept}:odd\nname/.gitattributes`)).toBe("* filter=mark");
  });

  it("an attributes file over git's 100 MiB limit, which git does not read, is never read into memory either: the changes are kept", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const isolation = await createIsolation(await openRepository(root), runId(), home);
    writeIn(isolation.path, { ".gitignore": "big/\n", "a.txt": "child a\n", "big/.gitattributes": "" });
    truncateSync(join(isolation.path, "big/.gitattributes"), 3 * 1024 ** 3); // sparse: no disk used, more than a Buffer holds
    expect(await settleIsolation(isolation, home)).toEqual({ files: 2, insertions: 2, deletions: 1 });
    expect(gitIn(root, "cat-file", "blob", `refs/pi-flow/${isolation.runId}:a.txt`)).toBe("child a");
  });

  it("runs no filter program the child's attributes name (files, a link), and writes the child's files and attributes byte for byte", async () => {
    const root = makeRepo({ "a.txt": "a\n", "src/b.txt": "b\n" });
    const isolation = await createIsolation(await openRepository(root), runId(), home);
    writeIn(isolation.path, {
      ".gitattributes": "* filter=mark\n",
      "src/.gitattributes": "*.txt filter=mark eol=crlf ident\n.gitattributes filter=mark\n",
      "a.txt": "child a\n",
      "src/b.txt": "child b $Id$\n",
      "src/new.txt": "new\n",
      "odd\nname/.gitattributes": "* filter=mark\n",
      "lib/c.txt": "c\n",
    });
    symlinkSync("* filter=mark", join(isolation.path, "lib/.gitattributes")); // git reads a staged link's target as attributes
    await settleIsolation(isolation, home);
    const applied = await applyChanges(await openRepository(root), isolation.runId);
    expect(applied).toEqual({ status: "applied", files: [".gitattributes", "a.txt", "lib/.gitattributes", "lib/c.txt", "odd\nname/.gitattributes", "src/.gitattributes", "src/b.txt", "src/new.txt"] });
    expect(existsSync(proof)).toBe(false);
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("child a\n");
    expect(readFileSync(join(root, "src/b.txt"), "utf8")).toBe("child b $Id$\n"); // no CRLF, no expanded ident
    expect(readFileSync(join(root, "src/new.txt"), "utf8")).toBe("new\n");
    expect(readFileSync(join(root, ".gitattributes"), "utf8")).toBe("* filter=mark\n");
    expect(readFileSync(join(root, "odd\nname/.gitattributes"), "utf8")).toBe("* filter=mark\n");
    expect(readlinkSync(join(root, "lib/.gitattributes"))).toBe("* filter=mark");
    expect(readFileSync(join(root, "lib/c.txt"), "utf8")).toBe("c\n");
    expect(readFileSync(join(root, "src/.gitattributes"), "utf8")).toBe("*.txt filter=mark eol=crlf ident\n.gitattributes filter=mark\n");
  });

  it("a child that changes the user's .gitattributes cannot switch a filter on for this apply; the user's own attributes still apply", async () => {
    const root = makeRepo({ ".gitattributes": "*.txt ident\n", "a.txt": "a\n" });
    const isolation = await createIsolation(await openRepository(root), runId(), home);
    writeIn(isolation.path, { ".gitattributes": "*.txt filter=mark\n", "a.txt": "child $Id$\n", "link.txt": "x\n" });
    await settleIsolation(isolation, home);
    expect(await applyChanges(await openRepository(root), isolation.runId)).toEqual({ status: "applied", files: [".gitattributes", "a.txt", "link.txt"] });
    expect(existsSync(proof)).toBe(false);
    expect(readFileSync(join(root, "a.txt"), "utf8")).toMatch(/^child \$Id: [0-9a-f]{40} \$\n$/); // the user's ident, as git checks it out
    expect(readFileSync(join(root, ".gitattributes"), "utf8")).toBe("*.txt filter=mark\n");
  });
});

describe("a link a child made into the repository's git folder", () => {
  it("is never applied: a later write of that file would rewrite .git/config (an fsmonitor, a hook path)", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const isolation = await createIsolation(await openRepository(root), runId(), home);
    symlinkSync(".git/config", join(isolation.path, "notes.md"));
    symlinkSync("../.GIT/hooks/pre-commit", join(isolation.path, "docs-hook"));
    writeIn(isolation.path, { "a.txt": "child a\n", "src/.keep": "" });
    symlinkSync("../.git", join(isolation.path, "src/git"));
    await settleIsolation(isolation, home);
    expect(await applyChanges(await openRepository(root), isolation.runId)).toEqual({ status: "conflict", files: ["docs-hook", "notes.md", "src/git"], reason: "links into a git folder (.git), which an apply never writes" });
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("a\n"); // nothing changed
    expect(existsSync(join(root, "notes.md"))).toBe(false);
  });
});
