import { describe, expect, it } from "vitest";
import { REDACTED, redactedJson, redactText, redactValue } from "../../src/runs/index.ts";

// Twelve and twenty-four words of the BIP-39 English list (not a wallet anyone uses).
const TWELVE = "legal winner thank year wave sausage worth useful legal winner thank yellow";
const TWENTY_FOUR = `${TWELVE} ${"letter advice cage absurd amount doctor acoustic avoid letter advice cage above"}`;

describe("a wallet's seed phrase under a name that says so", () => {
  it("is redacted whole, in .env, YAML, JSON, code and prose labels, escaped or not", () => {
    const R = REDACTED;
    for (const [text, expected] of [
      [`MNEMONIC="${TWELVE}"\nINFURA_PROJECT=app`, `MNEMONIC="${R}"\nINFURA_PROJECT=app`],
      [`DEPLOYER_MNEMONIC=${TWENTY_FOUR}\nNETWORK=sepolia`, `DEPLOYER_MNEMONIC=${R}\nNETWORK=sepolia`],
      [`wallet:\n  seed_phrase: ${TWELVE}\n  index: 0`, `wallet:\n  seed_phrase: ${R}\n  index: 0`],
      [JSON.stringify({ mnemonic: TWELVE, path: "m/44'/60'/0'/0" }), JSON.stringify({ mnemonic: R, path: "m/44'/60'/0'/0" })],
      [`const recoveryPhrase = '${TWELVE}';`, `const recoveryPhrase = '${R}';`],
      [`Secret Recovery Phrase: ${TWELVE}. Keep it offline.`, `Secret Recovery Phrase: ${R}. Keep it offline.`],
      [`seed words:\n${TWENTY_FOUR}\n`, `seed words:\n${R}\n`],
      [`passphrase: ${TWELVE}`, `passphrase: ${R}`],
      // ethers' wallet: its mnemonic's phrase, as JSON and as console.log prints it.
      [JSON.stringify({ mnemonic: { phrase: TWELVE, path: "m/44'/60'/0'/0/0" } }), JSON.stringify({ mnemonic: { phrase: R, path: "m/44'/60'/0'/0/0" } })],
      [`HDNodeWallet {\n  mnemonic: Mnemonic {\n    phrase: '${TWELVE}',\n    password: '',`, `HDNodeWallet {\n  mnemonic: Mnemonic {\n    phrase: '${R}',\n    password: '',`],
    ] as const) {
      expect(redactText(text).text, text).toBe(expected);
      // As a tool call's arguments, twice escaped.
      const nested = JSON.stringify({ args: JSON.stringify({ content: text }) });
      const back = (JSON.parse((JSON.parse(redactText(nested).text) as { args: string }).args) as { content: string }).content;
      expect(back).toBe(expected);
    }
  });

  it("is redacted in a structured value under such a name (a workflow's stored value, an evidence line)", () => {
    const value = { mnemonic: TWELVE, wallet: { recovery_phrase: TWENTY_FOUR, index: 0, mnemonic: { phrase: TWELVE, path: "m/44'/60'/0'/0/0" } }, note: TWELVE, phrase: TWELVE, opcode: { mnemonic: "mov" } };
    const expected = { mnemonic: REDACTED, wallet: { recovery_phrase: REDACTED, index: 0, mnemonic: { phrase: REDACTED, path: "m/44'/60'/0'/0/0" } }, note: TWELVE, phrase: TWELVE, opcode: { mnemonic: "mov" } };
    expect(redactValue(value).value).toEqual(expected);
    expect(JSON.parse(redactedJson(value)!)).toEqual(expected);
    // Kept as a list of its words: every word goes; a list of an assembler's mnemonics stays.
    const listed = { wallet: { mnemonic: TWELVE.split(" "), index: 0 }, opcodes: { mnemonic: ["mov", "add"] }, words: TWELVE.split(" ") };
    const listedExpected = { wallet: { mnemonic: TWELVE.split(" ").map(() => REDACTED), index: 0 }, opcodes: { mnemonic: ["mov", "add"] }, words: TWELVE.split(" ") };
    expect(redactValue(listed).value).toEqual(listedExpected);
    expect(JSON.parse(redactedJson(listed)!)).toEqual(listedExpected);
  });

  it("is redacted as a numbered list under its name (1. legal 2. winner …, a line each or one line), escaped too", () => {
    const words = TWELVE.split(" ");
    const R = REDACTED;
    for (const [text, expected] of [
      [`seed phrase:\n${words.map((w, i) => `${i + 1}. ${w}`).join("\n")}\nkeep it offline`, `seed phrase:\n${R}\nkeep it offline`],
      [`Recovery phrase: ${words.map((w, i) => `${i + 1}.${w}`).join(" ")}`, `Recovery phrase: ${R}`],
      [`mnemonic:\n  ${words.map((w, i) => `${i + 1}) ${w}`).join("\n  ")}\n`, `mnemonic:\n  ${R}\n`],
    ] as const) {
      expect(redactText(text).text, text).toBe(expected);
      const escaped = JSON.stringify({ content: text });
      expect((JSON.parse(redactText(escaped).text) as { content: string }).content).toBe(expected);
    }
    // Numbers out of order, or steps that are not a phrase's words, stay.
    for (const text of [
      `seed phrase:\n${words.map((w, i) => `${i === 1 ? 3 : i + 1}. ${w}`).join("\n")}`,
      "recovery phrase:\n1. open the app\n2. tap settings\n3. choose backup\n4. write the words down",
    ]) {
      expect(redactText(text), text).toEqual({ text, changed: false });
    }
  });

  it("leaves word lists with no such name, and labelled values that are not a phrase, as they are", () => {
    for (const text of [
      TWELVE, // unlabelled: prose, a word game, a test fixture's list
      `words: ${TWELVE}`,
      "seed phrase: never share these words with anyone because thieves could drain wallets fast",
      "Your recovery phrase: write down each word in order and keep the paper safe from fire",
      "mnemonic: mov\nopcode: 0x89\nmnemonic: add eax ebx",
      `mnemonic: ${TWELVE} legal`, // 13 words: no BIP-39 length
      `seed phrase: ${TWELVE.replace("year", "Year")}`,
      "--seed 42 --seed-phrase-file ~/.wallet/phrase.txt",
    ]) {
      expect(redactText(text), text).toEqual({ text, changed: false });
    }
  });
});
