export declare const TAG_VARIABLE = "PI_FLOW_CLI_TAG";
/** The processes (other than this one) whose environment carries `TAG_VARIABLE=tag`: one scan of /proc. */
export declare function taggedProcesses(tag: string): number[];
/** Those of `pids` that still carry the tag, without listing /proc again. */
export declare function stillTagged(pids: readonly number[], tag: string): number[];
