/**
 * Durable-runs benchmarks: figures and ratios from one run, no assertions.
 *
 *   npx node bench/runs.ts            # full size: 100 MB output, 10,000 runs
 *   BENCH_SCALE=0.1 npx node bench/runs.ts
 *
 * 1. A page read at the end of a 100 MB agent output, against one at its start and against reading
 *    the whole log: paging should cost O(page), so end/start stays near 1.
 * 2. Listing 10,000 runs: the first page, and walking every page. The listing fixture is written
 *    to tmpfs (/dev/shm) when there is one, because creating 10,000 fsynced runs on a disk only
 *    measures the disk; the durable create+settle cost is measured separately on the temp dir.
 *
 * Prints a table and compares with bench/runs.baseline.json when present.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runFiles } from "../src/runs/home.ts";
import { openRunStore, RunRegistry, type RunStore } from "../src/runs/index.ts";
import { time } from "./support.ts";

const SCALE = Number(process.env.BENCH_SCALE ?? "1");
const OUTPUT_BYTES = Math.round(100 * 1024 * 1024 * SCALE);
const LIST_RUNS = Math.round(10_000 * SCALE);
const PAGE_BYTES = 16 * 1024;

function stats(samples: number[]): { median: number; p95: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return { median: at(0.5), p95: at(0.95) };
}

function repeat(n: number, fn: () => void): { median: number; p95: number } {
  for (let i = 0; i < Math.min(20, n); i++) fn(); // warm up
  return stats(Array.from({ length: n }, () => time(fn)));
}

function openStore(home: string, maxSettled = 16): RunStore {
  return openRunStore({ home, cwd: process.cwd(), sessionId: "bench", registry: new RunRegistry({ maxSettled }) });
}

const figures: Record<string, number> = {};
const row = (name: string, value: number, unit: string) => {
  figures[name] = Number(value.toFixed(3));
  console.log(`${name.padEnd(44)} ${value.toFixed(3).padStart(12)} ${unit}`);
};

// 1. Page at the end of a 100 MB output -------------------------------------------------------------
{
  const home = mkdtempSync(join(tmpdir(), "pi-flow-bench-"));
  try {
    const store = openStore(home);
    const writer = store.create({ kind: "agent", task: { description: "big output" }, background: false });
    const message = `${"lorem ipsum dolor sit amet, données 数据 ✓ ".repeat(2300)}`; // ~100 KB, multibyte
    const messageBytes = Buffer.byteLength(message);
    const writeMs = time(() => {
      for (let written = 0; written < OUTPUT_BYTES; written += messageBytes + 1) writer.appendOutput(message);
    });
    writer.settle({ outcome: "succeeded", value: "done" });
    const runId = writer.runId;

    // Reach the end the way a client would: follow cursors with big pages, keep the last cursor.
    let cursor: string | undefined;
    let lastCursor = "";
    let walked = 0;
    const walkMs = time(() => {
      do {
        const page = store.inspectSingle(
          runId,
          "output",
          cursor ? { limitBytes: 4 * 1024 * 1024, cursor } : { limitBytes: 4 * 1024 * 1024 },
        );
        walked += Buffer.byteLength(page.page.text);
        if (page.page.nextCursor) lastCursor = page.page.nextCursor;
        cursor = page.page.nextCursor;
      } while (cursor);
    });
    const endPage = repeat(300, () => store.inspectSingle(runId, "output", { limitBytes: PAGE_BYTES, cursor: lastCursor }));
    const second = store.inspectSingle(runId, "output", { limitBytes: PAGE_BYTES }).page.nextCursor as string;
    const startPage = repeat(300, () => store.inspectSingle(runId, "output", { limitBytes: PAGE_BYTES, cursor: second }));
    const wholeRead = repeat(3, () => readFileSync(runFiles(store.scope, runId).output));

    console.log(`\n1. output of ${(walked / 1024 / 1024).toFixed(1)} MiB, pages of ${PAGE_BYTES} bytes`);
    row("output.write_MBps", walked / 1024 / 1024 / (writeMs / 1000), "MiB/s (redact + append)");
    row("output.walk_all_pages_ms", walkMs, "ms (4 MiB pages)");
    row("output.second_page_median_ms", startPage.median, "ms");
    row("output.page_at_end_median_ms", endPage.median, "ms");
    row("output.page_at_end_p95_ms", endPage.p95, "ms");
    row("output.read_whole_log_median_ms", wholeRead.median, "ms (readFileSync, for scale)");
    row("ratio.end_page_vs_second_page", endPage.median / startPage.median, "x (O(page) => ~1)");
    row("ratio.whole_log_vs_end_page", wholeRead.median / endPage.median, "x");
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

// 2. Listing 10,000 runs ----------------------------------------------------------------------------
{
  const base = existsSync("/dev/shm") ? "/dev/shm" : tmpdir();
  const home = mkdtempSync(join(base, "pi-flow-bench-"));
  const diskHome = mkdtempSync(join(tmpdir(), "pi-flow-bench-"));
  try {
    const store = openStore(home);
    const createMs = time(() => {
      for (let i = 0; i < LIST_RUNS; i++) {
        const w = store.create({
          kind: i % 5 === 0 ? "workflow" : "agent",
          task: { description: `run ${i}`, role: "worker" },
          background: false,
        });
        w.settle({ outcome: i % 13 === 0 ? "failed" : "succeeded", value: `result ${i}` });
      }
    });
    const durable = openStore(diskHome);
    const durableRuns = Math.max(20, Math.round(200 * SCALE));
    const durableMs = time(() => {
      for (let i = 0; i < durableRuns; i++) {
        durable
          .create({ kind: "agent", task: { description: `run ${i}` }, background: false })
          .settle({ outcome: "succeeded", value: i });
      }
    });

    const reader = openStore(home); // a fresh registry: everything comes from disk
    const firstPage = repeat(50, () => openStore(home).list({ limit: 20 }));
    // Walk each stream to its end; every call also returns the other stream's first page.
    let pages = 0;
    let rows = 0;
    const walkMs = time(() => {
      for (const stream of ["runs", "workflows"] as const) {
        let cursor: string | undefined;
        do {
          const opts: { limit: number; cursor?: string; workflowCursor?: string } = { limit: 100 };
          if (cursor && stream === "runs") opts.cursor = cursor;
          if (cursor && stream === "workflows") opts.workflowCursor = cursor;
          const page = reader.list(opts);
          pages++;
          rows += page[stream].length;
          cursor = stream === "runs" ? page.nextCursor : page.nextWorkflowCursor;
        } while (cursor);
      }
    });
    // The same first page (20 rows per stream) from a home holding only 50 runs.
    const small = openStore(mkdtempSync(join(base, "pi-flow-bench-small-")));
    for (let i = 0; i < 50; i++) {
      small
        .create({ kind: i % 2 ? "workflow" : "agent", task: { description: `run ${i}` }, background: false })
        .settle({ outcome: "succeeded", value: i });
    }
    const smallFirst = repeat(50, () => openStore(small.scope.home).list({ limit: 20 }));
    rmSync(small.scope.home, { recursive: true, force: true });
    const ids = reader.list({ limit: 100 }).runs.map((r) => r.runId);
    const batch = repeat(50, () => reader.inspectBatch(ids.slice(0, 20), { limitBytes: 1024 * 1024 }));

    console.log(`\n2. listing ${LIST_RUNS} runs (home on ${base === "/dev/shm" ? "tmpfs" : "disk"})`);
    row("list.create_settle_per_run_tmpfs_ms", createMs / LIST_RUNS, "ms");
    row("list.create_settle_per_run_disk_ms", durableMs / durableRuns, "ms (the calls; their fsyncs go to the group commit)");
    row("list.first_page_20_median_ms", firstPage.median, "ms");
    row("list.first_page_20_p95_ms", firstPage.p95, "ms");
    row("list.first_page_20_of_50_runs_median_ms", smallFirst.median, "ms");
    row("list.walk_all_pages_ms", walkMs, `ms (${pages} pages of 100, ${rows} rows)`);
    row("list.per_row_walk_us", (walkMs * 1000) / Math.max(1, rows), "µs");
    row("batch.inspect_20_median_ms", batch.median, "ms");
    row("ratio.first_page_all_vs_50_runs", firstPage.median / smallFirst.median, "x (same rows; the rest is the directory scan)");
  } finally {
    rmSync(home, { recursive: true, force: true });
    rmSync(diskHome, { recursive: true, force: true });
  }
}

// Baseline comparison ---------------------------------------------------------------------------------
const baselinePath = join(import.meta.dirname, "runs.baseline.json");
if (existsSync(baselinePath) && SCALE === 1) {
  const baseline = JSON.parse(readFileSync(baselinePath, "utf8")) as { figures: Record<string, number> };
  console.log("\nagainst bench/runs.baseline.json (now / baseline):");
  for (const [name, value] of Object.entries(figures)) {
    const before = baseline.figures[name];
    if (before) console.log(`  ${name.padEnd(42)} ${(value / before).toFixed(2)}x`);
  }
}
if (process.env.BENCH_JSON) console.log(JSON.stringify({ node: process.version, scale: SCALE, figures }, null, 2));
