// Generated from runtime/vm-heap.ts by runtime/compile-worker.ts. Do not edit: run npm run build:worker.
// The memory limit, enforced between operations as well as by QuickJS. At its own limit QuickJS
// may have no room left for its out-of-memory error and throw null instead, and the frames that
// null leaves free what they held, so by the time it is seen nothing shows it was the limit
// (frame-guard.ts catches it early in the functions the script writes, but not in code built at run
// time by eval or Function). So QuickJS gets a reserve above memoryBytes, and the run's interrupt
// handler, which QuickJS calls every few thousand operations, ends the run at memoryBytes as
// QuickJS counts it: a script that fills its heap step by step stops there, with room to spare.
                                                         

/**
 * JSRuntime starts with four allocator function pointers, then JSMallocState: malloc_count,
 * malloc_size, malloc_limit (quickjs.c), 32-bit words in this WebAssembly build.
 */
const SIZE_WORD = 5;
const LIMIT_WORD = 6;

/** QuickJS's hard limit above memoryBytes: what a script may allocate between two interrupt checks. */
export function memoryReserve(memoryBytes        )         {
  return Math.max(1024 * 1024, Math.floor(memoryBytes / 4));
}

/** The parts of quickjs-emscripten's runtime object the gauge reads (not in its typings). */
                            
                                   
                           
 

export class HeapGauge {
                   internals                  ;
                   word        ;
          words                         ;

          constructor(internals                  , word        ) {
    this.internals = internals;
    this.word = word;
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

  /** The bytes QuickJS counts as held now. */
  used()         {
    return this.read(SIZE_WORD) ?? 0;
  }

          read(offset        )                     {
    // Read afresh each time: the view is replaced whenever WebAssembly memory grows.
    const heap = this.internals.module?.HEAPU8;
    if (!heap) return undefined;
    if (this.words?.buffer !== heap.buffer) this.words = new Uint32Array(heap.buffer, heap.byteOffset, heap.byteLength >>> 2);
    return this.words[this.word + offset];
  }
}
