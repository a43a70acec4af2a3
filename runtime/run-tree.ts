// The bounds a workflow shares with the workflows it starts. A nested workflow
// (tools.external_workflow) is a run with limits of its own; a RunTree keeps the whole tree
// within its root's as well. Every agent() and tools.* call anywhere in the tree counts against the
// root's agentCalls and toolCalls, so nesting never multiplies them. Each nested run alive is
// charged what its worker may hold (its memoryBytes and the worker's 64 MiB of room, wasmMemoryCap),
// and the runs of a tree hold at most NESTED_MEMORY_BYTES of it together; one that does not fit
// waits, its wall clock running, until siblings settle. Charging the room too bounds the number of
// workers, each of which costs resident memory of its own, however small a heap they ask for. Background nested runs hold their share until they settle, after
// their root too.
import { LIMIT_LABELS } from "./limits.ts";
import type { SharedCount, TreeBudget } from "./types.ts";

/** The worker memory (wasmMemoryCap of each memoryBytes) the nested runs of one tree may hold at once. */
export const NESTED_MEMORY_BYTES = 1024 * 1024 * 1024;

interface HeapWaiter {
  bytes: number;
  grant(): void;
}

export class RunTree implements TreeBudget {
  private root: Record<SharedCount, number> | undefined;
  private readonly used: Record<SharedCount, number> = { agentCalls: 0, toolCalls: 0 };
  private heapFree = NESTED_MEMORY_BYTES;
  private readonly waiting: HeapWaiter[] = [];

  /** The root's run calls this once its limits are resolved; until then nothing is counted. */
  setRoot(limits: Record<SharedCount, number>): void {
    this.root = { agentCalls: limits.agentCalls, toolCalls: limits.toolCalls };
  }

  /** Counts one call of the tree; false, counting nothing, once the tree has made its root's limit of them. */
  take(name: SharedCount): boolean {
    if (this.root === undefined) return true;
    if (this.used[name] >= this.root[name]) return false;
    this.used[name] += 1;
    return true;
  }

  /** The message of a call the tree refused: the limit is the root's, reached by the tree together. */
  refusal(name: SharedCount): string {
    return `${LIMIT_LABELS[name]} of the root workflow (${this.root?.[name] ?? 0}) reached by the workflows of its tree together`;
  }

  /**
   * Resolves with a release once `bytes` of the nested runs' heap are free, in the order asked, so
   * a large run is never passed over for ever by small ones. `onWait` hears that the share is not
   * free now. Rejects if `signal` aborts first.
   */
  reserveHeap(bytes: number, signal: AbortSignal, onWait?: () => void): Promise<() => void> {
    return new Promise((resolve, reject) => {
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        this.heapFree += bytes;
        this.admit();
      };
      const waiter: HeapWaiter = {
        bytes,
        grant: () => {
          signal.removeEventListener("abort", onAbort);
          resolve(release);
        },
      };
      const onAbort = () => {
        const at = this.waiting.indexOf(waiter);
        if (at >= 0) this.waiting.splice(at, 1);
        // The head may have been the one blocking the rest.
        this.admit();
        reject(signal.reason);
      };
      if (signal.aborted) return reject(signal.reason);
      signal.addEventListener("abort", onAbort, { once: true });
      this.waiting.push(waiter);
      this.admit();
      if (this.waiting.includes(waiter)) onWait?.();
    });
  }

  private admit(): void {
    while (this.waiting.length > 0 && this.waiting[0]!.bytes <= this.heapFree) {
      const next = this.waiting.shift()!;
      this.heapFree -= next.bytes;
      next.grant();
    }
  }
}
