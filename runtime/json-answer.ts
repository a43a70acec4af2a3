// A host answer the host has already serialised. The bridge hands the VM its text as it is, or
// refuses it by its length or depth, instead of serialising the value again: a host that measured
// an answer (to journal it) pays for its JSON once, and one that only knows an answer's length (a
// resume of an answer too large to keep) can still be refused with the words the script saw.
//
// The answer is its text: `value` is that text parsed, never the object the host was given. A
// toJSON or getter that answers differently each time it is read is read once, so what a journal
// keeps of an answer is what the script was handed.
import { jsonDepth } from "./json.ts";
import { LIMIT_CEILINGS } from "./limits.ts";

/**
 * The deepest answer kept as JSON: no run may set valueDepth past it, so every run refuses a
 * deeper one, and the host never holds or walks more levels than this.
 */
export const DEEPEST_ANSWER = LIMIT_CEILINGS.valueDepth;

export class JsonAnswer {
  /** The answer's JSON; undefined when only its length is known (it is past every replyChars) or it nests past DEEPEST_ANSWER. */
  readonly text: string | undefined;
  /** The length of the answer's JSON: what the replyChars limit is checked against. */
  readonly chars: number;
  /** Levels of arrays and objects in the answer, counted up to DEEPEST_ANSWER + 1 ("deeper than any run takes"). */
  readonly depth: number;
  private parsed: { value: unknown } | undefined;

  constructor(text: string | undefined, chars: number = text?.length ?? 0, depth: number = text === undefined ? 0 : jsonDepth(text, DEEPEST_ANSWER)) {
    this.text = text;
    this.chars = chars;
    this.depth = depth;
  }

  /** The answer as its JSON reads: what a journal keeps of it (null when there is no text). */
  get value(): unknown {
    this.parsed ??= { value: this.text === undefined ? null : (JSON.parse(this.text) as unknown) };
    return this.parsed.value;
  }

  /** Whether the answer nests past DEEPEST_ANSWER: no run takes it, and only that is known of it. */
  get tooDeep(): boolean {
    return this.depth > DEEPEST_ANSWER;
  }

  /** An answer known only to nest past DEEPEST_ANSWER (a journal keeps no more of one). */
  static tooDeep(): JsonAnswer {
    return new JsonAnswer(undefined, 0, DEEPEST_ANSWER + 1);
  }

  /**
   * `value` serialised once; throws TypeError (as the bridge would) when it is not JSON. One nested
   * past DEEPEST_ANSWER, even past what V8's JSON.stringify can recurse through, is tooDeep.
   */
  static of(value: unknown): JsonAnswer {
    if (value === undefined) return new JsonAnswer("null");
    let text: string | undefined;
    try {
      text = JSON.stringify(value);
    } catch (error) {
      // V8 recurses once per level: past its stack it throws RangeError. Measured as it is
      // serialised, the value stops at DEEPEST_ANSWER + 1 levels, so this cannot overflow again.
      if (error instanceof RangeError && nestsPast(value, DEEPEST_ANSWER)) return JsonAnswer.tooDeep();
      throw new TypeError(`the host's answer must be JSON-serializable: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (text === undefined) throw new TypeError("the host's answer must be JSON-serializable");
    const answer = new JsonAnswer(text);
    return answer.tooDeep ? JsonAnswer.tooDeep() : answer;
  }
}

/** Thrown by the measuring replacer below: the value is deeper than asked. */
const DEEPER = Symbol("deeper");

/** Whether `value`, as JSON.stringify reaches it, nests past `limit` levels; it stops there. */
function nestsPast(value: unknown, limit: number): boolean {
  const depths = new WeakMap<object, number>();
  try {
    JSON.stringify(value, function (this: unknown, _key: string, item: unknown) {
      if (item !== null && typeof item === "object") {
        const depth = (typeof this === "object" && this !== null ? (depths.get(this) ?? 0) : 0) + 1;
        if (depth > limit) throw DEEPER;
        depths.set(item, depth);
      }
      return item;
    });
  } catch (error) {
    return error === DEEPER;
  }
  return false;
}
