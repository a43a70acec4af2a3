/**
 * Vitest's global set-up: the whole run's temporary files go in one folder of its own, removed when
 * the run ends. Tests make thousands of folders (git repositories, Pi sessions' projects, Postgres
 * clusters) and many are never removed by the test itself (a session a test does not dispose, a
 * repository a helper returns); vitest ends its forks without an exit event, so a per-process
 * clean-up never runs. TMPDIR is what `os.tmpdir()` reads on every call, in the forks and in every
 * child process they start, so setting it here moves all of them.
 *
 * Except jiti's cache, which Pi loads extensions through (pi-flow's own ~300 modules, in every flow
 * process and session): the run's `jiti` is a link to the one in the machine's temporary folder,
 * where jiti keeps it outside a test run. In a folder of the run's own, the first processes of
 * every run compiled them all again, about 6 s of CPU each. jiti checks each entry against its
 * module's source, and removing the run's folder removes only the link.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export default function setup(): () => void {
  const jiti = join(tmpdir(), "jiti");
  mkdirSync(jiti, { recursive: true });
  const root = mkdtempSync(join(tmpdir(), "pi-flow-test-run-"));
  symlinkSync(jiti, join(root, "jiti"));
  // Postgres runs as `nobody` when the tests run as root: it must reach its cluster's folder inside.
  chmodSync(root, 0o755);
  process.env.TMPDIR = root;
  return () => rmSync(root, { recursive: true, force: true, maxRetries: 3 });
}
