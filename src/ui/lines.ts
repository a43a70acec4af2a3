import type { Component } from "@earendil-works/pi-tui";
import { truncateToWidth, visibleWidth } from "@earendil-works/pi-tui";

/**
 * Lines drawn at render time, so they can read state that changes after the component was built
 * (the row's status, the clock), and cut to the width: a row never wraps or spills on a narrow
 * terminal. Text that should wrap (an answer) goes in Pi's Text instead.
 */
export class FitLines implements Component {
  private readonly draw: (width: number) => string[];

  constructor(draw: (width: number) => string[]) {
    this.draw = draw;
  }

  render(width: number): string[] {
    if (width <= 0) return [];
    return this.draw(width).map((line) => (visibleWidth(line) > width ? truncateToWidth(line, width, "…") : line));
  }

  invalidate(): void {}
}

/**
 * One header line, `lead middle tail`: `lead` (mark, label, name) and `tail` (elapsed, tokens,
 * cost) keep their room; `middle` (the description) is shortened to what is left, or left out.
 * Whatever still does not fit is cut by FitLines.
 */
export function fitHeader(width: number, lead: string, middle: string, tail: string | readonly string[]): string {
  if (typeof tail !== "string") tail = pickTail(width - visibleWidth(lead) - 1, tail);
  const tailWidth = tail ? visibleWidth(tail) + 1 : 0;
  const room = width - visibleWidth(lead) - tailWidth - 1;
  let line = lead;
  if (middle && room >= 6) line += ` ${visibleWidth(middle) > room ? truncateToWidth(middle, room, "…") : middle}`;
  return tail ? `${line} ${tail}` : line;
}

/** The first tail (fullest first) that fits in `room` columns, else the last (shortest). */
export function pickTail(room: number, tails: readonly string[]): string {
  return tails.find((tail) => visibleWidth(tail) <= room) ?? tails.at(-1) ?? "";
}
