// Generated from runtime/vm-malloc.ts by runtime/compile-worker.ts. Do not edit: run npm run build:worker.
// The bytes the WebAssembly build's allocator (emscripten's dlmalloc) holds. QuickJS's own count is
// no measure of them in this build: malloc_usable_size is unavailable under emscripten, so QuickJS
// adds 8 bytes per block and never the block's size (a run at 16 MiB held 240 MB of strings while
// QuickJS counted 9 KB). dlmalloc's state (its malloc_state) lies in the module's static data: it is
// found once per module by its shape, checked against the heap it describes, and read only while
// that heap is laid out as expected; otherwise nothing is read and the caller falls back.

/** 32-bit words of dlmalloc's malloc_state (no locks) that are read. */
const DV_SIZE = 2;
const TOP_SIZE = 3;
const LEAST_ADDR = 4;
const TOP = 6;
const FOOTPRINT = 108;
const SEGMENT_BASE = 112;
const SEGMENT_SIZE = 113;
const SEGMENT_NEXT = 114;
/** Bytes from the top chunk's end to its segment's end (TOP_FOOT_SIZE for 32-bit pointers). */
const TOP_FOOT = 40;
const PREVIOUS_IN_USE = 1;
const IN_USE = 2;
const FLAG_BITS = 7;
const MIN_CHUNK = 16;
/** How far the static data is searched: malloc_state sits well inside the module's first megabytes. */
const SEARCH_WORDS = 4 * 1024 * 1024;

/** Whether word `at` starts a malloc_state that describes the heap in `words`. */
function isMallocState(words             , at        )          {
  const top = words[at + TOP] ;
  const least = words[at + LEAST_ADDR] ;
  const topSize = words[at + TOP_SIZE] ;
  const footprint = words[at + FOOTPRINT] ;
  if (top === 0 || top % 8 !== 0 || least === 0 || least > top || footprint === 0) return false;
  if (least + footprint > words.byteLength || top + topSize + TOP_FOOT !== least + footprint) return false;
  return words[at + SEGMENT_BASE] === least && words[at + SEGMENT_SIZE] === footprint && words[(top >>> 2) + 1] === (topSize | PREVIOUS_IN_USE);
}

/** The word index of dlmalloc's malloc_state in this module's memory, or undefined when none is found. */
export function findMallocState(words             )                     {
  const end = Math.min(words.length - SEGMENT_NEXT - 1, SEARCH_WORDS);
  for (let at = 0; at < end; at++) {
    if (words[at + TOP] !== 0 && isMallocState(words, at)) return at;
  }
  return undefined;
}

/** A bound above the bytes held, read at once: every chunk below the top chunk but the designated free one. */
export function heldBound(words             , state        )         {
  return words[state + TOP]  - words[state + LEAST_ADDR]  - words[state + DV_SIZE] ;
}

/**
 * The bytes of the chunks in use, headers included, walked chunk by chunk (a millisecond or so per
 * 100,000 chunks); undefined when the heap is not one segment of well-formed chunks.
 */
export function heldBytes(words             , state        )                     {
  if (!isMallocState(words, state) || words[state + SEGMENT_NEXT] !== 0) return undefined;
  const top = words[state + TOP] ;
  let at = words[state + LEAST_ADDR] ;
  let held = 0;
  while (at < top) {
    const head = words[(at >>> 2) + 1] ;
    const size = (head & ~FLAG_BITS) >>> 0;
    if (size < MIN_CHUNK || at + size > top) return undefined;
    if ((head & IN_USE) !== 0) held += size;
    at += size;
  }
  return held;
}
