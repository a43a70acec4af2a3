// The run's store as the worker keeps it: JSON text per key, with the store limits checked
// before a write is accepted. A null-prototype Map, so any key a script picks is only a key.
import { limitMessage } from "./limits.ts";
import type { WorkflowLimits } from "./types.ts";

/** Why a write was refused: the limit it would break, and what to tell the script. */
export interface StoreRefusal {
  limit: "storeWrites" | "storeValueChars" | "storeTotalChars" | "storeWriteChars";
  message: string;
}

export class VmStore {
  private readonly limits: WorkflowLimits;
  private readonly entries = new Map<string, string>();
  /** Characters of keys plus JSON values held now. */
  private held = 0;
  private writes = 0;
  private writtenChars = 0;

  constructor(limits: WorkflowLimits, initial: Array<[string, string]>) {
    this.limits = limits;
    for (const [key, text] of initial) {
      this.entries.set(key, text);
      this.held += key.length + text.length;
    }
  }

  /** Characters the store holds now (keys and JSON values). */
  get chars(): number {
    return this.held;
  }

  get(key: string): string | undefined {
    return this.entries.get(key);
  }

  /** Checks a write (`text` undefined deletes); nothing changes until commit(). */
  check(key: string, text: string | undefined): StoreRefusal | undefined {
    const limits = this.limits;
    // Each write (deletes too) is journaled, so the writes themselves are bounded, not just the live store.
    if (this.writes >= limits.storeWrites) {
      return { limit: "storeWrites", message: `${limitMessage("storeWrites", limits)}: store() was called ${this.writes} times in this run` };
    }
    // A delete journals its key: a key of megabytes deleted again and again is written each time.
    if (text === undefined) return this.overWritten(key.length);
    if (text.length > limits.storeValueChars) {
      return { limit: "storeValueChars", message: `${limitMessage("storeValueChars", limits)}: store(${JSON.stringify(key.slice(0, 80))}) value has ${text.length} characters of JSON` };
    }
    const total = this.heldAfter(key, text);
    if (total > limits.storeTotalChars) {
      return { limit: "storeTotalChars", message: `${limitMessage("storeTotalChars", limits)}: the store would hold ${total} characters; delete keys with store(key, undefined)` };
    }
    return this.overWritten(key.length + text.length);
  }

  /** Refuses a write of `chars` (key and JSON value) that would pass storeWriteChars over the run. */
  private overWritten(chars: number): StoreRefusal | undefined {
    const written = this.writtenChars + chars;
    if (written <= this.limits.storeWriteChars) return undefined;
    return { limit: "storeWriteChars", message: `${limitMessage("storeWriteChars", this.limits)}: store() would have written ${written} characters in this run` };
  }

  /** Characters the store would hold after writing `text` (undefined: deleting) at `key`. */
  heldAfter(key: string, text: string | undefined): number {
    const old = this.entries.get(key);
    const oldChars = old === undefined ? 0 : key.length + old.length;
    return this.held - oldChars + (text === undefined ? 0 : key.length + text.length);
  }

  /** Applies a write that check() accepted. */
  commit(key: string, text: string | undefined): void {
    this.held = this.heldAfter(key, text);
    this.writes++;
    this.writtenChars += key.length + (text?.length ?? 0);
    if (text === undefined) this.entries.delete(key);
    else this.entries.set(key, text);
  }
}
