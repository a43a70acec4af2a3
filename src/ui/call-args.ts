/**
 * A model's tool arguments as a row reads them. Pi draws a call before it validates it (and while
 * it streams), so any field may be missing or of any type: a row that trusted the schema would
 * throw at render time, and a throw there takes down Pi's whole screen, not one row.
 */
function field(args: unknown, name: string): unknown {
  return typeof args === "object" && args !== null ? (args as Record<string, unknown>)[name] : undefined;
}

/** The field when it is a string. */
export function stringArg(args: unknown, name: string): string | undefined {
  const value = field(args, name);
  return typeof value === "string" ? value : undefined;
}

/** The string items of the field when it is an array. */
export function stringsArg(args: unknown, name: string): string[] {
  const value = field(args, name);
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : [];
}

/** Only the named fields that are strings: a field of another type is left out. */
export function pickStrings<K extends string>(args: unknown, names: readonly K[]): Partial<Record<K, string>> {
  const picked: Partial<Record<K, string>> = {};
  for (const name of names) {
    const value = stringArg(args, name);
    if (value !== undefined) picked[name] = value;
  }
  return picked;
}
