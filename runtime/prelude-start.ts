// VM source of the prelude's last part: how the script starts and ends (__flow_start, errorInfo(),
// uncaught()) and configure(), the run-specific step the worker calls before the script's first line.

/** __flow_start, uncaught() and configure(), as the prelude's core defines them. */
export const RUN_START = String.raw`
// The failure as the host reads it. Its objects have no prototype, so a toJSON the script put on
// Object.prototype cannot rewrite them (and forge a limit); each field is read once, so a getter that
// answers a string first and something else after cannot slip past the check.
function errorInfo(error) {
  try {
    if (error !== null && typeof error === "object") {
      const text = (key) => {
        const field = error[key];
        return typeof field === "string" ? field : undefined;
      };
      const name = text("name");
      const message = text("message");
      const stack = text("stack");
      const info = { __proto__: null, name: name ?? "Error", message: message ?? inspect(error), stack: stack ?? "" };
      info.code = text("code");
      info.runId = text("runId");
      info.limit = apply(weakGet, limitErrors, [error]);
      return stringify(info);
    }
    return stringify({ __proto__: null, name: "Error", message: "uncaught " + inspect(error), stack: "" });
  } catch {
    return stringify({ __proto__: null, name: "Error", message: "uncaught error that could not be read", stack: "" });
  }
}

// QuickJS throws null when it cannot even allocate its out-of-memory error. The script's
// outermost frame hands each uncaught value here while what it holds is still alive: a null that
// arrives when not even a few KiB more fit is the memory limit, not the script's own throw null.
const MemoryProbe = ArrayBuffer;
function uncaught(error) {
  if (error === null) {
    try {
      new MemoryProbe(4096);
    } catch {
      host("out_of_memory");
    }
  }
  return error;
}

// The wrapper line calls this once with a class whose static method "<anonymous>" is the script
// (the name its frame always had in stacks); its private method, which the catches of the script
// and of its functions call, reaches uncaught() through the class's prototype (super), so no
// name of it is in the script's scope (vm-script.ts wrapScript, frame-guard.ts).
const setPrototypeOf = Object.setPrototypeOf;
const freeze = Object.freeze;
const wrapperBase = freeze({ __proto__: null, uncaught });
define("__flow_start", function (wrapper) {
  delete g.__flow_start;
  let promise;
  try {
    setPrototypeOf(wrapper, wrapperBase);
    // eval of a built string can still name the class: frozen, nobody rewires what it calls.
    freeze(wrapper);
    promise = apply(wrapper["<anonymous>"], undefined, []);
  } catch (error) {
    promise = rejected(error);
  }
  settleWith(
    promise,
    (value) => {
      let text;
      try {
        text = value === undefined ? undefined : toJson(value, "the workflow's return value");
      } catch (error) {
        return host("finish", "error", errorInfo(error));
      }
      host("finish", "value", text);
    },
    (error) => host("finish", "error", errorInfo(error)),
  );
});

// The run-specific step. Everything above is the same for every run, so a worker evaluates it
// ahead of time, while it waits for its next run; when the run arrives, the worker calls this once,
// before the script's first line. Only the worker holds it: it is handed over through the host
// function, which the script never sees.
let configured = false;
host("prepared", function configure() {
  if (configured) throw new NativeTypeError("the workflow VM is already configured");
  configured = true;
  config = call("config");
  now = config.startedAt;
  [sa, sb, sc, sd] = config.seedState;
  for (let i = 0; i < 12; i++) random();
  define("args", deepFreeze(parse(config.argsText)));
  const toolTable = Object.create(null);
  for (const name of config.toolNames) {
    toolTable[name] = { [name]: (input) => request("tool", name, input === undefined ? {} : input, "tools." + name + "() arguments") }[name];
  }
  const available = config.toolNames.length > 0 ? config.toolNames.join(", ") : "none";
  define("tools", new Proxy(Object.freeze(toolTable), {
    get(target, key) {
      if (typeof key !== "string" || key in target || key === "then" || key === "toJSON") return target[key];
      throw new NativeTypeError("tools." + key + " is not available in this workflow (available: " + available + "); name the tools it calls in meta.tools");
    },
  }));
});
`;
