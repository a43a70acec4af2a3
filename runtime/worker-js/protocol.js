// Generated from runtime/protocol.ts by runtime/compile-worker.ts. Do not edit: run npm run build:worker.
// Messages between runWorkflow (main thread) and the worker that owns the QuickJS VM.
// Payloads that came from or go to the script are JSON text, parsed on the receiving side.
                                                            

/** File name the prelude runs under, so its stack frames never map onto the script. */
export const PRELUDE_FILENAME = "flow:prelude";

                             
                                                                                                      
                     
                                         
                  
                                                                                                  
                   
                                                                                           
                       
 

                            
                                        
                   
                      
                    
                                              
                                                   
                                 
 

                             
              
                   
                                                                            
               
                                                                                  
               
                         
                    
                                                                       
                            
                                                                              
                      
 

/**
 * The words a run's main thread and its worker share. `SHARED_STOP`: non-zero asks the VM to stop
 * at its next interrupt check (main → worker). `SHARED_SPENT`: the ms of CPU the VM spent in its
 * finished turns, as the worker's own monotonic clock measured them; `SHARED_TURN`: the number of
 * the running turn (counting from 1), 0 between turns; `SHARED_TURN_AT`: when that turn started, by
 * the wall clock, in ms after `clockOrigin` (worker → main). The main thread's watchdog reads them
 * to stop a run whose one native call runs past `cpuMs`, which QuickJS's interrupt check cannot
 * see. The wall clock can step, so the watchdog believes a turn's start only within what its own
 * monotonic clock allows (run-workflow.ts).
 */
export const SHARED_STOP = 0;
export const SHARED_SPENT = 1;
export const SHARED_TURN = 2;
export const SHARED_TURN_AT = 3;
export const SHARED_WORDS = 4;

                              
                
                  
                
                 
     
                                                                                                 
                                                                                                     
     
                    
 

                          
                                                         
                                                                 

/** The replies the host had for the worker in one turn of its event loop: one message, one wake-up. */
                                 
                  
                          
 

/**
 * The host stopped the run (its wall time, a cancel): the worker ends the run, sending the output it
 * still holds, then answers "stopped". Everything it sent before that reply reaches the host first.
 */
                              
               
 

                                                                                    

/** agent(), tools.*(), and describeTool()/searchTools() ("discover", answered from the tools' declarations). */
                                                     
const CALL_KINDS                       = new Set(["agent", "tool", "discover"]);

                            
                                       
                
                
                  
                 
                 
 

                                                                                      

/** `at`: the script's frame that made the call, for a refusal the host raises (bridge.ts). */
                                                                                                                

                          
                     
                                                                                                      
                                     
                                           
               
                                                                                                     
                                           
                                    
                                                 
                                                           
                                                                                      
                        

// Run-time guards: a message crossing the thread boundary is checked, never trusted by a cast.
                                      
const isObject = (value         )                  => value !== null && typeof value === "object" && !Array.isArray(value);
const isString = (value         )                  => typeof value === "string";
const isId = (value         )                  => Number.isSafeInteger(value) && (value          ) > 0;
const FAILURE_KINDS                       = new Set(["script", "limit", "sandbox"]);

function optionalStrings(fields        , keys                   )          {
  return keys.every((key) => fields[key] === undefined || isString(fields[key]));
}

function isVmOutcome(value         )                     {
  if (!isObject(value)) return false;
  if (value.ok === true) return value.text === undefined || isString(value.text);
  const error = value.error;
  return value.ok === false && isObject(error) && FAILURE_KINDS.has(error.kind) && isString(error.message) && optionalStrings(error, ["code", "name", "stack", "runId"]);
}

const isCall = (value         )                       =>
  isObject(value) && value.type === "call" && isId(value.id) && CALL_KINDS.has(value.kind) && isString(value.name) && isString(value.text) && (value.at === undefined || isString(value.at));

export function isWorkerToMain(value         )                        {
  if (!isObject(value)) return false;
  switch (value.type) {
    case "ready":
    case "stopped":
      return true;
    case "prepared":
      return typeof value.ok === "boolean";
    case "boot_error":
      return isString(value.message);
    case "output":
      return isString(value.text);
    case "call":
      return isCall(value);
    case "calls":
      return Array.isArray(value.calls) && value.calls.length > 0 && value.calls.every(isCall);
    case "store":
      return isString(value.key) && (value.text === undefined || isString(value.text));
    case "done":
      return typeof value.reusable === "boolean" && isVmOutcome(value.outcome);
    default:
      return false;
  }
}

function isReply(value         )                        {
  if (!isObject(value) || value.type !== "reply" || !isId(value.id)) return false;
  if (value.ok === true) return isString(value.text);
  return value.ok === false && isObject(value.error) && isString(value.error.message);
}

export function isMainToWorker(value         )                        {
  if (!isObject(value)) return false;
  if (value.type === "reply") return isReply(value);
  if (value.type === "stop") return true;
  if (value.type === "replies") return Array.isArray(value.replies) && value.replies.length > 0 && value.replies.every(isReply);
  return value.type === "run" && isString(value.filename) && isString(value.body) && isString(value.hook) && isObject(value.limits) && isObject(value.config) && value.shared instanceof SharedArrayBuffer && typeof value.clockOrigin === "number";
}
