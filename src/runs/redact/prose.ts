import type { Rule } from "./rule.ts";

/**
 * A password told in a sentence: `the password is Zk4-orchid-Pq`, `my password was …`, `Password
 * for user admin: …` (a prompt and what was typed, pasted). Prose says anything after "password
 * is" (`required`, `too short`, `stored in vault`, `sha256-hashed`), so the word must look made up:
 * 8 characters or more, with an upper-case and a lower-case letter and a digit, and no `/` (a path).
 * A password that is a plain word or lacks a case (`hunter2`) is not told from prose here.
 */
const NAMES = "password|passphrase|passwd|passcode";
const TOLD = new RegExp(
  String.raw`((?:${NAMES})(?<=(?:^|[^A-Za-z0-9_-]|\\[nrt])(?:${NAMES}))(?:[ \t]+for[ \t]+[^\n:"\\]{1,64}:|[ \t]+(?:is|was)(?:[ \t]+now)?:?)[ \t]+)([^\s"'\x60,;()<>\\]{8,128})`,
  "gi",
);

export const PROSE_RULES: readonly Rule[] = [
  {
    name: "password-told",
    needles: ["password", "passphrase", "passwd", "passcode"],
    pattern: TOLD,
    secret: (m) => {
      const [, head = "", written = ""] = m;
      // A sentence's own full stop is no part of the word.
      const word = written.replace(/[.:]+$/, "");
      if (word.length < 8 || word.includes("/") || !/[A-Z]/.test(word) || !/[a-z]/.test(word) || !/\d/.test(word)) return null;
      return [head.length, head.length + word.length];
    },
  },
];
