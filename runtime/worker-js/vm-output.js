// Generated from runtime/vm-output.ts by runtime/compile-worker.ts. Do not edit: run npm run build:worker.
// What a run's script prints (console.*, text()), on its way to the host: held to outputChars and
// sent in batches, ahead of every other message the run sends.
                                                  

/**
 * Output is sent to the host at most this often while the VM runs, and whatever is left when the
 * turn ends: a loop of a million text() calls is a few messages, not a million (each one cost the
 * host's thread a message, a redaction and a log entry, and held Pi's event loop for seconds). The
 * first output after a quiet spell leaves at once, and the interrupt handler sends what waits while
 * a script spins, so output written before a hang still reaches the run's evidence.
 */
export const OUTPUT_FLUSH_MS = 10;

export class VmOutput {
                   limit        ;
                   post                                 ;
          written = 0;
  /** Output not yet sent to the host, and when it was last sent. */
          pending = "";
          sentAt = Number.NEGATIVE_INFINITY;

  constructor(outputChars        , post                                 ) {
    this.limit = outputChars;
    this.post = post;
  }

  /** Queues what fits under outputChars; false when the text did not fit whole (the run then fails). */
  write(text        )          {
    const room = this.limit - this.written;
    if (text.length <= room) {
      this.written += text.length;
      this.queue(text);
      return true;
    }
    // Keep what fits: output past the limit is never silently dropped, the run fails instead.
    if (room > 0) this.queue(text.slice(0, room));
    this.written = this.limit;
    return false;
  }

  /** Sends the output waiting in this turn. */
  flush()       {
    if (this.pending === "") return;
    const text = this.pending;
    this.pending = "";
    this.sentAt = performance.now();
    this.post({ type: "output", text });
  }

  /** Sends what waits if none was sent for OUTPUT_FLUSH_MS (the interrupt handler, while a script spins). */
  flushIfDue()       {
    if (this.pending !== "" && performance.now() - this.sentAt >= OUTPUT_FLUSH_MS) this.flush();
  }

  /** Every other message leaves after the output written before it, so the host reads them in order. */
  postAfter(message              )       {
    this.flush();
    this.post(message);
  }

  /** Output waits for the end of the turn, unless none was sent for a while (OUTPUT_FLUSH_MS). */
          queue(text        )       {
    if (text.length === 0) return;
    this.pending += text;
    this.flushIfDue();
  }
}
