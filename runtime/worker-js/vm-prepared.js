// Generated from runtime/vm-prepared.ts by runtime/compile-worker.ts. Do not edit: run npm run build:worker.
// A QuickJS runtime and context with the run-independent part of the prelude already evaluated:
// what an idle worker builds ahead of its next run, so the run starts without compiling the
// prelude. Each prepared VM serves exactly one run and is disposed after it (VmSession.finish).
                                                                                                           
import { PRELUDE_FILENAME } from "./protocol.js";
                                            

/** `ends`: the refusal ended the run, and the prelude reports the stack of the script's call (VmSession.onHost). */
                                                                                                                                                              

/** The run's side of the VM's single host function (VmSession.onHost). */
                                                               

export class PreparedVm {
           rt                ;
           vm                ;
  /** The prelude's deliver(id, ok, text): settles a pending host request inside the VM. */
          deliverFn                           ;
  /** The prelude's configure(): installs the run's config; called once, then dropped. */
          configureFn                           ;
          handler                         ;

          constructor(module                   ) {
    this.rt = module.newRuntime();
    this.vm = this.rt.newContext();
  }

  /**
   * Evaluates the prelude in a new runtime and context, without a run's limits (the run sets them
   * when it starts; QuickJS counts the prelude's allocations against its memory limit all the
   * same). Throws, having disposed what it made, when the prelude fails.
   */
  static prepare(module                   , prelude        )             {
    const prepared = new PreparedVm(module);
    try {
      prepared.evaluatePrelude(prelude);
      return prepared;
    } catch (error) {
      try {
        prepared.dispose();
      } catch {
        // The WASM instance may be broken; the caller reports the failure it was given.
      }
      throw error;
    }
  }

  get deliver()                            {
    return this.deliverFn;
  }

  /** Hands every later host call to the run, which answers them from its own message and limits. */
  attach(handler             )       {
    this.handler = handler;
  }

  /**
   * Runs the prelude's configure step (it asks the run for `config` through the host function).
   * Returns the thrown value's handle if it failed, for the run to classify and dispose.
   */
  configure()                            {
    const configure = this.configureFn;
    this.configureFn = undefined;
    if (!configure) return this.vm.newError("the workflow VM was already configured");
    const result = this.vm.callFunction(configure, this.vm.undefined);
    configure.dispose();
    if (result.error) return result.error;
    result.value.dispose();
    return undefined;
  }

  /** Throws when a handle leaked: the WASM instance then aborts and must not serve another run. */
  dispose()       {
    this.deliverFn?.dispose();
    this.configureFn?.dispose();
    this.deliverFn = undefined;
    this.configureFn = undefined;
    this.vm.dispose();
    this.rt.dispose();
  }

          evaluatePrelude(prelude        )       {
    const host = this.vm.newFunction("__flow_host", (...args) => this.vm.newString(JSON.stringify(this.onHost(args))));
    this.vm.setProp(this.vm.global, "__flow_host", host);
    host.dispose();
    const result = this.vm.evalCode(prelude, PRELUDE_FILENAME);
    if (result.error) {
      const thrown          = this.vm.dump(result.error);
      result.error.dispose();
      const message = thrown !== null && typeof thrown === "object" && typeof (thrown                         ).message === "string" ? (thrown                       ).message : String(thrown);
      throw new Error(`prelude failed: ${message}`);
    }
    result.value.dispose();
    if (!this.deliverFn || !this.configureFn) throw new Error("prelude failed: it did not register deliver() and configure()");
  }

          onHost(args                 )            {
    if (this.handler) return this.handler(args);
    // Before a run is attached, only the prelude itself calls, to hand over its two entry points.
    const op = args[0] !== undefined && this.vm.typeof(args[0]) === "string" ? this.vm.getString(args[0]) : undefined;
    const fn = args[1] !== undefined && this.vm.typeof(args[1]) === "function" ? args[1] : undefined;
    if (op === "register" && fn) this.deliverFn = fn.dup();
    else if (op === "prepared" && fn) this.configureFn = fn.dup();
    else return { ok: false, error: { name: "Error", message: `host operation ${String(op)} before the run started` } };
    return { ok: true, value: null };
  }
}
