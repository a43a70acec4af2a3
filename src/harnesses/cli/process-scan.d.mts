export declare const TAG_VARIABLE = "PI_FLOW_CLI_TAG";
/** The processes (other than this one) whose environment carries `TAG_VARIABLE=tag`: one scan of /proc. */
export declare function taggedProcesses(tag: string): number[];
/** When process `pid` started, or undefined once it is a zombie or gone (an exiting process is not gone yet). */
export declare function startOf(pid: number): string | undefined;
