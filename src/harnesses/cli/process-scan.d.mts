export declare const TAG_VARIABLE = "PI_FLOW_CLI_TAG";
/** The variable a pi child's bash commands carry their child's tag in (pi-bash.ts). */
export declare const PI_TAG_VARIABLE = "PI_FLOW_PI_TAG";
/** The processes (other than this one) whose environment carries `<variable>=tag` (default TAG_VARIABLE): one scan of /proc. */
export declare function taggedProcesses(tag: string, variable?: string): number[];
/** When process `pid` started, or undefined once it is a zombie or gone (an exiting process is not gone yet). */
export declare function startOf(pid: number): string | undefined;
