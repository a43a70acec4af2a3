/**
 * Counts calls into `node:fs` and `node:fs/promises` by name, for tests that pin how much file work
 * a step of the run store does (vi.mock each module with countedFs / countedFsPromises).
 */
export const fileCalls = new Map<string, number>();

function counted<T extends object>(module: T, prefix: string): T {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(module)) {
    out[name] =
      typeof value === "function" && /^[a-z]/.test(name)
        ? (...args: unknown[]) => {
            fileCalls.set(`${prefix}${name}`, (fileCalls.get(`${prefix}${name}`) ?? 0) + 1);
            return (value as (...a: unknown[]) => unknown)(...args);
          }
        : value;
  }
  return out as T;
}

export const countedFs = <T extends object>(module: T): T => counted(module, "");
export const countedFsPromises = <T extends object>(module: T): T => counted(module, "promises.");
