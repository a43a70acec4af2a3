// A git patch as evidence shows it: its text redacted file by file, and its binary files' data
// (base85 of zlib-deflated bytes, which no pattern can read) decoded and searched too. A binary
// file whose bytes hold a secret cannot be redacted without corrupting it: its data is withheld.
import { inflateSync } from "node:zlib";
import { redactText } from "./index.ts";

/** Each file's part of a patch; a binary file's part holds base85 data after this line. */
const FILE_PART = /(?=^diff --git )/m;
const BINARY_DATA = "\nGIT binary patch\n";
/** git's base85 alphabet (its base85.c), in value order. */
const BASE85 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";
const BASE85_VALUE = new Map([...BASE85].map((char, value) => [char, value]));
/**
 * The most a binary file's data is inflated to be searched: a child can write a file that
 * compresses to almost nothing, and one past this is withheld unread rather than held in memory.
 */
const SEARCH_MAX_BYTES = 16 * 1024 * 1024;

/** One line of binary data: a length character (A-Z 1-26, a-z 27-52), then 5 characters per 4 bytes. */
function decodeLine(line: string): Buffer | null {
  const first = line.charCodeAt(0);
  const length = first >= 65 && first <= 90 ? first - 64 : first >= 97 && first <= 122 ? first - 70 : -1;
  const data = line.slice(1);
  if (length < 0 || data.length % 5 !== 0 || length > (data.length / 5) * 4) return null;
  const bytes = Buffer.alloc((data.length / 5) * 4);
  for (let at = 0; at < data.length; at += 5) {
    let word = 0;
    for (let i = 0; i < 5; i++) {
      const value = BASE85_VALUE.get(data[at + i]!);
      if (value === undefined) return null;
      word = word * 85 + value;
    }
    if (word > 0xffffffff) return null;
    bytes.writeUInt32BE(word, (at / 5) * 4);
  }
  return bytes.subarray(0, length);
}

/**
 * The bytes of each block (`literal N` or `delta N`, then its lines up to an empty one) of a
 * binary file's data, inflated; null when the data is not what git writes. A delta's inserted
 * bytes are literal in it, so a secret a child wrote is found there too.
 */
function binaryBlocks(data: string): Buffer[] | null {
  const blocks: Buffer[] = [];
  let lines: Buffer[] | undefined;
  for (const line of data.split("\n")) {
    if (lines === undefined) {
      if (/^(literal|delta) \d+$/.test(line)) lines = [];
      else if (line !== "") return null;
      continue;
    }
    if (line === "") {
      try {
        blocks.push(inflateSync(Buffer.concat(lines), { maxOutputLength: SEARCH_MAX_BYTES }));
      } catch {
        return null;
      }
      lines = undefined;
      continue;
    }
    const bytes = decodeLine(line);
    if (bytes === null) return null;
    lines.push(bytes);
  }
  return lines === undefined ? blocks : null;
}

/** Whether a binary file's data may hold a secret: one is found in its bytes, or they cannot be read to tell. */
function holdsSecret(data: string): boolean {
  const blocks = binaryBlocks(data);
  // latin1 maps each byte to one character, so an ASCII secret among binary bytes reads as itself.
  return blocks === null || blocks.some((bytes) => redactText(bytes.toString("latin1")).changed);
}

export interface RedactedPatch {
  text: string;
  /** The paths (as the part's `diff --git` line names them) whose binary data was withheld. */
  withheld: string[];
}

/**
 * The patch with its text redacted and its binary data kept byte for byte, except a binary file's
 * data that holds a secret: `withheld` names that file, and its part is left out when `binary` is
 * "drop" (the patch still applies, without it) or keeps its header with a note in place of the data
 * when it is "note" (a patch to read).
 */
export function redactGitPatch(patch: string, binary: "drop" | "note"): RedactedPatch {
  const withheld: string[] = [];
  const parts = patch.split(FILE_PART).map((part) => {
    const at = part.indexOf(BINARY_DATA);
    if (at === -1) return redactText(part).text;
    const head = redactText(part.slice(0, at)).text;
    const data = part.slice(at + BINARY_DATA.length);
    if (!holdsSecret(data)) return head + part.slice(at);
    withheld.push(/^diff --git (.*)$/m.exec(head)?.[1] ?? "(a binary file)");
    return binary === "drop" ? "" : `${head}\n(binary data withheld: the file's bytes hold a secret)\n`;
  });
  return { text: parts.join(""), withheld };
}
