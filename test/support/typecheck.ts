import ts from "typescript";

/**
 * Files parsed once per process, by name, options and text: each check builds a new program, and
 * parsing lib.*.d.ts and the same declarations again for each one was much of its time. A
 * SourceFile is bound the same way by every program with the same options, so they can share it.
 */
const parsed = new Map<string, ts.SourceFile>();

/**
 * Type-checks files held in memory (path → text) with the given options and returns each
 * diagnostic's text, prefixed with its file when `withFile` is set. Files not in the map (the
 * standard library) come from disk.
 */
export function checkInMemory(files: ReadonlyMap<string, string>, options: ts.CompilerOptions, withFile = false): string[] {
  const host = ts.createCompilerHost(options);
  const settings = JSON.stringify(options);
  const readFile = host.readFile.bind(host);
  host.readFile = (name) => files.get(name) ?? readFile(name);
  host.fileExists = (name) => files.has(name) || ts.sys.fileExists(name);
  host.getSourceFile = (name, version) => {
    const text = host.readFile(name);
    if (text === undefined) return undefined;
    const key = `${settings}\0${name}\0${JSON.stringify(version)}\0${text}`;
    const known = parsed.get(key) ?? ts.createSourceFile(name, text, version);
    parsed.set(key, known);
    return known;
  };
  const program = ts.createProgram([...files.keys()], options, host);
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const message = ts.flattenDiagnosticMessageText(d.messageText, "\n");
    return withFile ? `${d.file?.fileName ?? ""}: ${message}` : message;
  });
}
