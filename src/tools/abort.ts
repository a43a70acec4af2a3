/** Pi may call execute with a signal that is already aborted: fail at once, preserving AbortError. */
export function abortIfSignalled(signal: AbortSignal | undefined): void {
  if (!signal?.aborted) return;
  throw signal.reason instanceof Error ? signal.reason : new DOMException("Operation aborted", "AbortError");
}
