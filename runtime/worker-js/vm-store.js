// Generated from runtime/vm-store.ts by runtime/compile-worker.ts. Do not edit: run npm run build:worker.
// The run's store as the worker keeps it: JSON text per key, with the store limits checked
// before a write is accepted. A null-prototype Map, so any key a script picks is only a key.
import { limitMessage } from "./limits.js";
                                                 

/** Why a write was refused: the limit it would break, and what to tell the script. */
                               
                                                                                   
                  
 

export class VmStore {
                   limits                ;
                   entries = new Map                ();
  /** Characters of keys plus JSON values held now. */
          held = 0;
          writes = 0;
          writtenChars = 0;

  constructor(limits                , initial                         ) {
    this.limits = limits;
    for (const [key, text] of initial) {
      this.entries.set(key, text);
      this.held += key.length + text.length;
    }
  }

  /** Characters the store holds now (keys and JSON values). */
  get chars()         {
    return this.held;
  }

  get(key        )                     {
    return this.entries.get(key);
  }

  /** Checks a write (`text` undefined deletes); nothing changes until commit(). */
  check(key        , text                    )                           {
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
          overWritten(chars        )                           {
    const written = this.writtenChars + chars;
    if (written <= this.limits.storeWriteChars) return undefined;
    return { limit: "storeWriteChars", message: `${limitMessage("storeWriteChars", this.limits)}: store() would have written ${written} characters in this run` };
  }

  /** Characters the store would hold after writing `text` (undefined: deleting) at `key`. */
  heldAfter(key        , text                    )         {
    const old = this.entries.get(key);
    const oldChars = old === undefined ? 0 : key.length + old.length;
    return this.held - oldChars + (text === undefined ? 0 : key.length + text.length);
  }

  /** Applies a write that check() accepted. */
  commit(key        , text                    )       {
    this.held = this.heldAfter(key, text);
    this.writes++;
    this.writtenChars += key.length + (text?.length ?? 0);
    if (text === undefined) this.entries.delete(key);
    else this.entries.set(key, text);
  }
}
