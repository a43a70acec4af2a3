import type { EscapeView } from "./escapes.ts";

/**
 * The runs of consecutive whole lines of `text` (with their line breaks) that hold a match of
 * `global` (a pattern with the g flag), as [start, end) offsets. A decoded reading reads these
 * alone: an escape sits inside its token's line, so a message of eight kilobytes with one escape
 * in it is read decoded for that line, not whole.
 */
export function lineWindows(text: string, global: RegExp): [start: number, end: number][] {
  const windows: [number, number][] = [];
  let windowStart = -1;
  let windowEnd = -1;
  global.lastIndex = 0;
  for (let match = global.exec(text); match !== null; match = global.exec(text)) {
    const lineStart = text.lastIndexOf("\n", match.index) + 1;
    const newline = text.indexOf("\n", match.index);
    const lineEnd = newline === -1 ? text.length : newline + 1;
    if (lineStart !== windowEnd) {
      if (windowStart !== -1) windows.push([windowStart, windowEnd]);
      windowStart = lineStart;
    }
    windowEnd = lineEnd;
    global.lastIndex = lineEnd;
  }
  if (windowStart !== -1) windows.push([windowStart, windowEnd]);
  return windows;
}

/** The views `read` gives of each window of `text`, their origins mapped back to `text`. */
export function windowViews(text: string, global: RegExp, read: (part: string) => EscapeView[]): EscapeView[] {
  const views: EscapeView[] = [];
  for (const [start, end] of lineWindows(text, global)) {
    if (start === 0 && end === text.length) {
      views.push(...read(text));
      continue;
    }
    for (const view of read(text.slice(start, end))) views.push({ text: view.text, origin: (index) => start + view.origin(index) });
  }
  return views;
}
