/** Pi may call execute with a signal that is already aborted: fail at once, preserving AbortError. */
export function abortIfSignalled(signal: AbortSignal | undefined): void {
  if (!signal?.aborted) return;
  throw signal.reason instanceof Error ? signal.reason : new DOMException("Operation aborted", "AbortError");
}

/**
 * `work`'s outcome, or an AbortError as soon as `signal` aborts (tool-calling contract 8.1): Esc
 * frees the tool call at once; `work` goes on, and what it does later is the run's business.
 */
export function untilSettledOrAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  abortIfSignalled(signal);
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const finish = (done: () => void) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener("abort", onAbort);
      done();
    };
    const onAbort = () => finish(() => reject(signal.reason instanceof Error ? signal.reason : new DOMException("Operation aborted", "AbortError")));
    signal.addEventListener("abort", onAbort, { once: true });
    if (signal.aborted) return onAbort();
    work.then(
      (value) => finish(() => resolve(value)),
      (error: unknown) => finish(() => reject(error)),
    );
  });
}
