import { posix, win32 } from "node:path";

/**
 * The environment an external CLI child gets: an allowlist, never the parent's whole environment,
 * so API keys, tokens and passwords the parent holds do not reach a child unless the user says so.
 *
 * Passed always: what a program needs to run and find its own configuration (PATH, HOME, the
 * locale variables by exact name, temp and XDG directories) plus the harness's own non-secret configuration variables (for
 * example CLAUDE_CONFIG_DIR, CODEX_HOME). Passed when configured: the names listed in
 * PI_FLOW_CLI_ENV (every CLI harness) and PI_FLOW_<HARNESS>_ENV (that harness only), comma or
 * space separated; `NAME_*` matches a prefix. A CLI's own credentials, such as ANTHROPIC_API_KEY
 * or OPENAI_API_KEY, are passed only this way.
 */

/** The names of folders every child is passed, among BASE_NAMES (made absolute: FOLDER_NAMES). */
const BASE_FOLDER_NAMES = ["HOME", "TMPDIR", "TMP", "TEMP", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR", "USERPROFILE", "APPDATA", "LOCALAPPDATA"];

const BASE_NAMES = [
  "PATH",
  "USER",
  "LOGNAME",
  "SHELL",
  "TERM",
  // Locale: the POSIX and glibc categories by name. A prefix (`LC_*`) would also pass any variable
  // a user happened to start with LC_ (`LC_SECRET_TOKEN`).
  "LANG",
  "LANGUAGE",
  "LC_ALL",
  "LC_CTYPE",
  "LC_COLLATE",
  "LC_MESSAGES",
  "LC_MONETARY",
  "LC_NUMERIC",
  "LC_TIME",
  "LC_ADDRESS",
  "LC_IDENTIFICATION",
  "LC_MEASUREMENT",
  "LC_NAME",
  "LC_PAPER",
  "LC_TELEPHONE",
  "TZ",
  "NO_PROXY",
  "no_proxy",
  // Windows needs these to start any program.
  "SystemRoot",
  "ComSpec",
  "PATHEXT",
  ...BASE_FOLDER_NAMES,
];

/** The variable that adds names for every CLI harness. */
export const CLI_ENV_VARIABLE = "PI_FLOW_CLI_ENV";

/** The variable that adds names for one harness, e.g. PI_FLOW_CLAUDE_ENV. */
export const harnessEnvVariable = (harness: string): string => `PI_FLOW_${harness.toUpperCase()}_ENV`;

function parseNames(value: string | undefined): string[] {
  return (value ?? "").split(/[\s,]+/).filter((name) => /^[A-Za-z_][A-Za-z0-9_]*\*?$/.test(name));
}

function matcher(patterns: readonly string[]): (name: string) => boolean {
  const exact = new Set(patterns.filter((pattern) => !pattern.endsWith("*")));
  const prefixes = patterns.filter((pattern) => pattern.endsWith("*")).map((pattern) => pattern.slice(0, -1));
  return (name) => exact.has(name) || prefixes.some((prefix) => name.startsWith(prefix));
}

/** The names a child of this harness may receive, as configured in `source`. */
export function allowedEnvNames(harness: string, ownNames: readonly string[], source: NodeJS.ProcessEnv): string[] {
  return [...BASE_NAMES, ...ownNames, ...parseNames(source[CLI_ENV_VARIABLE]), ...parseNames(source[harnessEnvVariable(harness)])];
}

/** Windows names its variables in any case (`Path` is usual there): only PATH is matched so, and only on Windows. */
const isPathName = (name: string, platform: NodeJS.Platform): boolean => (platform === "win32" ? name.toUpperCase() === "PATH" : name === "PATH");

/** The PATH of `source`, under whichever case Windows gave it. */
export function pathOf(source: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): string | undefined {
  if (source.PATH !== undefined || platform !== "win32") return source.PATH;
  return Object.entries(source).find(([name]) => isPathName(name, platform))?.[1];
}

/**
 * PATH with its absolute entries only. A relative one (`.`, `node_modules/.bin`, an empty entry,
 * which means `.`) is looked up from the child's folder, the project: Claude Code runs `git` at
 * start, so a project's own `./git` would run with the user's login, trusted project or not.
 */
export function absolutePath(path: string, platform: NodeJS.Platform = process.platform): string {
  const paths = platform === "win32" ? win32 : posix;
  return path
    .split(paths.delimiter)
    .filter((entry) => paths.isAbsolute(entry))
    .join(paths.delimiter);
}

/**
 * The passed variables that name a folder. A relative one is read from the child's folder (a
 * worktree, a subfolder, another tree), not the one the user named it from: the CLI would miss its
 * login and settings, or take a folder there for the user's own settings, whose hooks and
 * permissions count whether Pi trusts that tree or not. So it is made absolute from the host's folder.
 */
const FOLDER_NAMES = new Set([...BASE_FOLDER_NAMES, "CLAUDE_CONFIG_DIR", "CODEX_HOME"]);

/** `value` made absolute from `cwd` when it names a folder relatively; an empty value stays empty. */
function absoluteFolder(name: string, value: string, cwd: string, platform: NodeJS.Platform): string {
  const paths = platform === "win32" ? win32 : posix;
  return FOLDER_NAMES.has(name) && value !== "" && !paths.isAbsolute(value) ? paths.resolve(cwd, value) : value;
}

/**
 * The child's environment: only the allowed variables of `source` that are set, PATH's absolute
 * entries only, folders made absolute from `cwd` (the host's).
 */
export function childEnvironment(
  harness: string,
  ownNames: readonly string[],
  source: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
  cwd: string = process.cwd(),
): NodeJS.ProcessEnv {
  const allowed = matcher(allowedEnvNames(harness, ownNames, source));
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(source)) {
    if (value === undefined) continue;
    if (isPathName(name, platform)) env[name] = absolutePath(value, platform);
    else if (allowed(name)) env[name] = absoluteFolder(name, value, cwd, platform);
  }
  return env;
}

/**
 * git settings for a CLI child of a project Pi does not trust. Claude Code runs `git status` as it
 * starts (its model's context holds the repository's status), and a repository's own .git/config
 * may name a program for git to run then (core.fsmonitor) or hooks for later commands: a folder
 * that came as an archive, or that another user prepared, runs nothing of its own that way. Passed
 * as git's environment configuration, which outranks the repository's, after any the user passes.
 */
const UNTRUSTED_GIT_CONFIG: readonly (readonly [string, string])[] = [
  ["core.fsmonitor", "false"],
  ["core.hooksPath", "/dev/null"],
];

/** `env` with UNTRUSTED_GIT_CONFIG added to the GIT_CONFIG_COUNT entries it may already hold. */
export function withUntrustedGitConfig(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const given = Number(env.GIT_CONFIG_COUNT ?? 0);
  const start = Number.isSafeInteger(given) && given > 0 ? given : 0;
  const added: NodeJS.ProcessEnv = { GIT_CONFIG_COUNT: String(start + UNTRUSTED_GIT_CONFIG.length) };
  UNTRUSTED_GIT_CONFIG.forEach(([key, value], index) => {
    added[`GIT_CONFIG_KEY_${start + index}`] = key;
    added[`GIT_CONFIG_VALUE_${start + index}`] = value;
  });
  return { ...env, ...added };
}
