// Generated from runtime/vm-heap.ts by runtime/compile-worker.ts. Do not edit: run npm run build:worker.
// The memory limit, enforced between operations as well as by QuickJS. QuickJS's own count is no
// measure of bytes in this WebAssembly build (8 bytes per block, vm-malloc.ts), so the run's
// interrupt handler, which QuickJS calls every few thousand operations, reads what the allocator
// holds and ends the run past memoryBytes: a script that fills its heap step by step stops there.
// QuickJS's limit stays set (memoryBytes plus a reserve on its own count): it refuses any one
// allocation larger than that, and at it QuickJS may have no room for its out-of-memory error and
// throw null (frame-guard.ts tells that null apart).
                                                         
import { findMallocState, heldBound, heldBytes } from "./vm-malloc.js";

/**
 * JSRuntime starts with four allocator function pointers, then JSMallocState: malloc_count,
 * malloc_size, malloc_limit (quickjs.c), 32-bit words in this WebAssembly build.
 */
const SIZE_WORD = 5;
const LIMIT_WORD = 6;
/**
 * JSRuntime's malloc_gc_threshold (after the atom table, class table and four list heads): QuickJS
 * collects cycles when its count passes it, and its count (8 bytes a block) passes it late. Set to 0,
 * the next object QuickJS makes collects them. JS_NewRuntime sets it to 256 KiB, which is checked.
 */
const GC_THRESHOLD_WORD = 27;
const FIRST_GC_THRESHOLD = 256 * 1024;

/** QuickJS's hard limit above memoryBytes: what a script may allocate between two interrupt checks. */
export function memoryReserve(memoryBytes        )         {
  return Math.max(1024 * 1024, Math.floor(memoryBytes / 4));
}

/** The parts of quickjs-emscripten's runtime object the gauge reads (not in its typings). */
                            
                                   
                           
 

/** Where each module's allocator keeps its state (found once: it lies in the module's static data). */
const mallocStates = new WeakMap                       ();

/** A walk of the heap may take at most this share of the run's time. */
const WALK_SHARE = 0.1;

export class HeapGauge {
                   internals                  ;
                   word        ;
          words                         ;
                   mallocState                    ;
  /** performance.now() before which no walk starts (WALK_SHARE). */
          nextWalk = 0;
  /** Whether QuickJS's collection can be asked for (GC_THRESHOLD_WORD found where expected). */
                   collectable         ;

          constructor(internals                  , word        ) {
    this.internals = internals;
    this.word = word;
    this.mallocState = this.locateMallocState();
    this.collectable = this.read(GC_THRESHOLD_WORD) === FIRST_GC_THRESHOLD;
  }

  /**
   * Sets the runtime's memory limit: memoryBytes plus its reserve when QuickJS's count can be read
   * (the gauge returned), else memoryBytes alone, as QuickJS enforces it (undefined returned). The
   * count is read only where the limit just set is found, so a build laid out differently falls back.
   */
  static attach(rt                , memoryBytes        )                        {
    const internals = rt                               ;
    const pointer = internals.rt?.value;
    const hard = memoryBytes + memoryReserve(memoryBytes);
    rt.setMemoryLimit(hard);
    if (typeof pointer === "number" && Number.isInteger(pointer) && pointer > 0 && pointer % 4 === 0) {
      const gauge = new HeapGauge(internals, pointer / 4);
      if (gauge.read(LIMIT_WORD) === hard) return gauge;
    }
    rt.setMemoryLimit(memoryBytes);
    return undefined;
  }

  /**
   * Whether the run holds more than `limit` bytes. The allocator's bound is read first, at once; only
   * past the limit are the chunks walked, at most a tenth of the run's time unless `now` (the run is
   * settling): between walks a run that already passed a walk is let go on. Past the limit, QuickJS
   * collects its garbage cycles first (`makeObject` makes the object whose allocation runs the
   * collection), then the chunks are walked again. Without the allocator's state, QuickJS's own
   * count is compared.
   */
  over(limit        , makeObject            , now = false)          {
    if (this.view() === undefined) return false;
    if (this.mallocState === undefined) return (this.read(SIZE_WORD) ?? 0) > limit;
    if (heldBound(this.view() , this.mallocState) <= limit) return false;
    const started = performance.now();
    if (!now && started < this.nextWalk) return false;
    let held = this.held();
    if (held > limit && this.collectable) {
      this.view() [this.word + GC_THRESHOLD_WORD] = 0;
      try {
        makeObject();
      } catch {
        // No room even for one object: the walk below still tells.
      }
      held = this.held();
    }
    const ended = performance.now();
    this.nextWalk = ended + (ended - started) / WALK_SHARE;
    return held > limit;
  }

          held()         {
    const words = this.view() ;
    const state = this.mallocState ;
    return heldBytes(words, state) ?? heldBound(words, state);
  }

          locateMallocState()                     {
    const module = this.internals.module;
    const words = this.view();
    if (module === undefined || words === undefined) return undefined;
    let state = mallocStates.get(module);
    if (state === undefined) {
      state = findMallocState(words) ?? null;
      mallocStates.set(module, state);
    }
    return state ?? undefined;
  }

          read(offset        )                     {
    return this.view()?.[this.word + offset];
  }

  /** The module's memory as words, read afresh: the view is replaced whenever WebAssembly memory grows. */
          view()                          {
    const heap = this.internals.module?.HEAPU8;
    if (!heap) return undefined;
    if (this.words?.buffer !== heap.buffer) this.words = new Uint32Array(heap.buffer, heap.byteOffset, heap.byteLength >>> 2);
    return this.words;
  }
}
