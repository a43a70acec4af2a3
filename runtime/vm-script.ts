// The script as the VM runs it: the body inside the wrapper line that hands what it leaves uncaught
// to the prelude, and the script's frame in a host call's stack, which names the call's line.
import { capText } from "./text.ts";

/**
 * One wrapper line before the body (errors.ts WRAPPER_LINES); the body keeps its own lines and
 * columns. What the body leaves uncaught passes the prelude's uncaught() before its frame is gone,
 * and so does what each of its functions throws (frame-guard.ts adds their catches). They reach
 * uncaught() through the private method of a class named `hook` (a name the script does not use),
 * which reaches it through `super` (the prelude sets the class's prototype): a private name is a
 * syntax error in a script body, so no name of it is in the script's scope to read or replace.
 */
export function wrapScript(body: string, hook: string): string {
  return `__flow_start(class ${hook} { static async "<anonymous>"() { "use strict"; try {\n${body}\n} catch (${hook}_error) { throw ${hook}.#${hook}(${hook}_error); } } static #${hook}(error) { return super.uncaught(error); } });`;
}

/** The innermost frame of the script in a call's stack: all the host needs to name the call's line. */
export function scriptFrame(stack: string | undefined, filename: string): string | undefined {
  const frame = stack?.split("\n").find((line) => line.includes(`${filename}:`));
  return frame === undefined ? undefined : capText(frame, MAX_FRAME_CHARS);
}

const MAX_FRAME_CHARS = 512;
