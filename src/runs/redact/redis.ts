import { isPlaceholder } from "./key-names.ts";
import type { Rule } from "./rule.ts";

/**
 * Redis passwords: `redis-server --requirepass …` (a Compose file's `command:`), `requirepass …` and
 * `masterauth …` lines of redis.conf, `CONFIG SET requirepass …`, and `AUTH [user] …` typed at
 * redis-cli's prompt (`127.0.0.1:6379> AUTH …`). A `$VARIABLE` or `${VARIABLE}` is no secret.
 */

/** A value: quoted, or a bare word that is no `$VARIABLE`. Group 2. */
const VALUE = String.raw`("[^"\n]{1,512}"|'[^'\n]{1,512}'|[^\s"'\\;|&<>\x60$][^\s"'\\;|&<>\x60]{0,511})`;

function password(m: RegExpExecArray): readonly [number, number] | null {
  const raw = m[2] ?? "";
  const quoted = /^["']/.test(raw);
  const value = quoted ? raw.slice(1, -1) : raw;
  if (value.length < 3 || isPlaceholder(value)) return null;
  const start = (m[1] ?? "").length + (quoted ? 1 : 0);
  return [start, start + value.length];
}

export const REDIS_RULES: readonly Rule[] = [
  {
    name: "redis-requirepass",
    needles: ["requirepass", "masterauth"],
    pattern: new RegExp(String.raw`((?:requirepass|masterauth)(?<=(?:^|[^A-Za-z0-9_]|\\[nrt])(?:requirepass|masterauth))[ \t]+)${VALUE}`, "g"),
    secret: password,
  },
  {
    // At redis-cli's prompt (`host:port>`): `AUTH password`, or `AUTH user password`.
    name: "redis-auth",
    needles: ["> AUTH", ">AUTH"],
    pattern: new RegExp(String.raw`(AUTH(?<=[\w.\]]:\d{1,5}> ?AUTH)[ \t]+(?:[A-Za-z0-9_.-]{1,64}[ \t]+(?=\S))?)${VALUE}`, "g"),
    secret: password,
  },
];
