export declare const TAG_VARIABLE = "PI_FLOW_CLI_TAG";
/** The variable a pi child's bash commands carry their child's tag in (pi-bash.ts). */
export declare const PI_TAG_VARIABLE = "PI_FLOW_PI_TAG";
/** The processes (other than this one) whose environment carries `<variable>=tag` (default TAG_VARIABLE): one scan of /proc. */
export declare function taggedProcesses(tag: string, variable?: string): number[];
/** When process `pid` started, or undefined once it is a zombie or gone (an exiting process is not gone yet). */
export declare function startOf(pid: number): string | undefined;
/** When process `pid` started, zombie or not; undefined once it is gone. */
export declare function leaderStart(pid: number): string | undefined;
/**
 * The processes (other than this one) carrying one of `tags` in `variable`, in one of `sessions`
 * (session id → its leader's start, undefined: not checked), or descending from such a process: one scan of /proc.
 */
export declare function ownedProcesses(tags: ReadonlySet<string>, variable: string, sessions: ReadonlyMap<number, string | undefined>): number[];
