import ts from "typescript";

/**
 * Type-checks files held in memory (path → text) with the given options and returns each
 * diagnostic's text, prefixed with its file when `withFile` is set. Files not in the map (the
 * standard library) come from disk.
 */
export function checkInMemory(files: ReadonlyMap<string, string>, options: ts.CompilerOptions, withFile = false): string[] {
  const host = ts.createCompilerHost(options);
  const readFile = host.readFile.bind(host);
  host.readFile = (name) => files.get(name) ?? readFile(name);
  host.fileExists = (name) => files.has(name) || ts.sys.fileExists(name);
  host.getSourceFile = (name, version) => {
    const text = host.readFile(name);
    return text === undefined ? undefined : ts.createSourceFile(name, text, version);
  };
  const program = ts.createProgram([...files.keys()], options, host);
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const message = ts.flattenDiagnosticMessageText(d.messageText, "\n");
    return withFile ? `${d.file?.fileName ?? ""}: ${message}` : message;
  });
}
