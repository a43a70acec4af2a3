// A host answer the host has already serialised. The bridge hands the VM its text as it is, or
// refuses it by its length, instead of serialising the value again: a host that measured an
// answer (to journal it) pays for its JSON once, and one that only knows an answer's length (a
// resume of an answer too large to keep) can still be refused with the words the script saw.
import { toJsonText } from "./json.ts";

export class JsonAnswer {
  /** The answer as the host holds it: what its journal keeps of it. */
  readonly value: unknown;
  /** The answer's JSON; undefined when only its length is known (it is past every replyChars). */
  readonly text: string | undefined;
  /** The length of the answer's JSON: what the replyChars limit is checked against. */
  readonly chars: number;
  constructor(value: unknown, text: string | undefined, chars: number = text?.length ?? 0) {
    this.value = value;
    this.text = text;
    this.chars = chars;
  }

  /** `value` serialised once; throws TypeError (as the bridge would) when it is not JSON. */
  static of(value: unknown): JsonAnswer {
    return new JsonAnswer(value ?? null, value === undefined ? "null" : toJsonText(value, "the host's answer"));
  }
}
