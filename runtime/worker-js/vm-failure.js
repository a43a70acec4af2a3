// Generated from runtime/vm-failure.ts by runtime/compile-worker.ts. Do not edit: run npm run build:worker.
// How an uncaught value from the VM becomes a VmFailure: a limit the runtime raised, or the
// script's own error, with every field a script controls bounded (runtime/text.ts).
import { isLimitName, limitMessage } from "./limits.js";
                                               
import { capText, MAX_ERROR_MESSAGE_CHARS, MAX_STACK_CHARS, sanitizeIdentifier } from "./text.js";
                                                            
                                                  

/** The readable fields of a thrown value. */
                             
                
                   
                 
                
                 
                                                                                                   
                 
 

/**
 * Copies the string fields of a thrown object; anything else it carries is dropped. `limit` is
 * read only from the prelude's own report (`fromPrelude`): a value read straight from the VM is
 * script-shaped and could forge it.
 */
export function thrownInfo(value         , fromPrelude = false)             {
  if (value === null || typeof value !== "object") return { name: "Error", message: `uncaught ${capText(String(value), MAX_ERROR_MESSAGE_CHARS)}` };
  const source = value                           ;
  const info             = {};
  const keys = fromPrelude ? (["name", "message", "stack", "code", "runId", "limit"]         ) : (["name", "message", "stack", "code", "runId"]         );
  for (const key of keys) {
    const field = source[key];
    if (typeof field === "string") info[key] = field;
  }
  return info;
}

/** Parses the prelude's JSON report of an uncaught error. */
export function parseThrownInfo(text                    )             {
  try {
    return thrownInfo(JSON.parse(text ?? "{}"), true);
  } catch {
    return { name: "Error", message: "uncaught error that could not be read" };
  }
}

/** A limit failure with the limit's own message. */
export function limitFailure(name           , limits                , detail         )            {
  const message = limitMessage(name, limits);
  return { kind: "limit", code: name, message: detail === undefined ? message : `${message}: ${detail}` };
}

export function classifyThrown(info            , limits                )            {
  const message = info.message ?? "";
  if (info.name === "InternalError" && /out of memory/i.test(message)) return limitFailure("memoryBytes", limits);
  if (info.name === "InternalError" && /stack overflow/i.test(message)) return limitFailure("stackBytes", limits);
  // QuickJS's parsers (JSON.parse of deep nesting, eval) report the same overflow as a SyntaxError.
  if (info.name === "SyntaxError" && message === "stack overflow") return limitFailure("stackBytes", limits);
  // Only an error the runtime raised for a limit counts; a script's own `code: "agentCalls"` does not.
  if (info.limit !== undefined && isLimitName(info.limit)) {
    const failure            = { kind: "limit", code: info.limit, message: capText(info.message ?? limitMessage(info.limit, limits), MAX_ERROR_MESSAGE_CHARS) };
    // The script's call the limit refused (store(), an oversized agent() or tools.* call): its line.
    if (info.stack) failure.stack = capText(info.stack, MAX_STACK_CHARS);
    return failure;
  }
  const failure            = {
    kind: "script",
    name: sanitizeIdentifier(info.name ?? "Error") ?? "Error",
    message: capText(message, MAX_ERROR_MESSAGE_CHARS),
  };
  if (info.stack) failure.stack = capText(info.stack, MAX_STACK_CHARS);
  const code = info.code === undefined ? undefined : sanitizeIdentifier(info.code);
  if (code !== undefined) failure.code = code;
  const runId = info.runId === undefined ? undefined : sanitizeIdentifier(info.runId);
  if (runId !== undefined) failure.runId = runId;
  return failure;
}

/** A host operation's refusal: the prelude throws it in the script as an error of that name. */
export function refuse(name        , message        , code         )            {
  return { ok: false, error: code === undefined ? { name, message } : { name, message, code } };
}

/** A catchable RangeError for a limit the runtime enforces; uncaught, it ends the run as kind "limit". */
export function refuseLimit(limit           , message        )            {
  return { ok: false, error: { name: "RangeError", message, code: limit, limit } };
}

/** A refusal after which the run is over: the prelude reports the script's call site for it. */
export function ends(reply           )            {
  if (!reply.ok) reply.error.ends = true;
  return reply;
}
