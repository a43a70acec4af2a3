// The workflow worker's entry. Plain JavaScript, and so is everything it loads: the worker's
// modules are compiled ahead of time to runtime/worker-js/ (runtime/compile-worker.ts; a test
// keeps them equal to their .ts sources), so a new worker never strips TypeScript types, and an
// installed pi-flow (under node_modules, where Node refuses to strip types) needs no loader hook.
await import("./worker-js/worker.js");
