/**
 * The file piscina loads in each decode thread: a CommonJS shim that imports decode-worker.js.
 *
 * Why a shim: piscina loads its worker file with require() first and uses import() only when
 * require() throws. On Node 20.19+ require() of an ES module succeeds (require(esm)), and under CI
 * that synchronous path once killed a vitest fork with the V8 fatal "IsGraphAsync must be used on an
 * instantiated module" in ModuleWrap::InstantiateSync, called from piscina's require() (Node's own
 * note on that path: it "cannot fully handle" a module graph that is not yet instantiated,
 * nodejs/node#59703). Requiring this CommonJS file never enters require(esm); the worker's modules
 * load through Node's ordinary asynchronous ESM loader, as everywhere else in the gateway.
 *
 * `__esModule` makes piscina take `default` as it is (the handler, once the import settles) instead
 * of wrapping this object. A failed import is thrown again outside the promise, so the thread dies
 * at start with the real error and the pool reports it (the gateway then exits, as it did when
 * piscina imported the worker itself); the handler it leaves would also throw that error.
 */
const handler: Promise<(task: unknown) => unknown> = import('./decode-worker.js').then(
  (m) => m.default as (task: unknown) => unknown,
  (e: unknown) => {
    queueMicrotask(() => {
      throw e;
    });
    return () => {
      throw e;
    };
  },
);

export = { __esModule: true, default: handler };
