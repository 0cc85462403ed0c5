/**
 * The piscina pool running decode-worker.js (loaded through decode-worker-entry.cjs, which says why).
 *
 * Worker file: piscina needs JavaScript, so the worker always runs from compiled output. From dist/
 * (the built gateway) the sibling `decode-worker-entry.cjs` is used; from src/ (vitest runs the
 * TypeScript directly) the pool uses `dist/telemetry/decode/decode-worker-entry.cjs`, which `npm install` builds (prepare
 * script) and test/support/global-setup.ts rebuilds when a source file is newer. This keeps the worker
 * a plain ESM file with no loader hooks (a tsx/ts-node loader inside worker threads is fragile and not
 * a dependency here), and tests exercise the same JS that production runs.
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { decoderSetting } from './native.js';
import type { SharedSlot } from './task-slots.js';
import type { DecodeResult, DecodeTask } from './worker-protocol.js';

/** Where the compiled worker is; throws with the fix when it is not built. */
export function decodeWorkerPath(): string {
  const candidates = [
    new URL('./decode-worker-entry.cjs', import.meta.url),
    new URL('../../../dist/telemetry/decode/decode-worker-entry.cjs', import.meta.url),
  ];
  // Sync I/O once at start-up, not on the event loop's hot path.
  for (const url of candidates) {
    const path = fileURLToPath(url);
    if (existsSync(path)) return path;
  }
  throw new Error('dist/telemetry/decode/decode-worker-entry.cjs is missing: run `npm run build`');
}

export interface DecodePoolOptions {
  /** Worker threads. Default: available cores - 1 (at least 1), leaving a core to the event loop. */
  threads?: number;
  /** Tasks the pool may hold (running + queued); the ingest never posts more. */
  maxTasks: number;
  /** The shared task slots (task-slots.ts), given to every worker at start. */
  slots?: readonly SharedSlot[];
}

export interface DecodePool {
  run(task: DecodeTask): Promise<DecodeResult>;
  readonly threads: number;
  close(): Promise<void>;
}

/** Starts the pool with its threads warm (no spawn latency on the first batches). */
export function createDecodePool(opts: DecodePoolOptions): DecodePool {
  const threads = opts.threads ?? Math.max(1, availableParallelism() - 1);
  const pool = new Piscina({
    filename: decodeWorkerPath(),
    minThreads: threads,
    maxThreads: threads,
    idleTimeout: 60_000,
    maxQueue: opts.maxTasks,
    concurrentTasksPerWorker: 1,
    // Without it piscina re-queues a task it could not hand to a busy worker at the tail, so with
    // several tasks in flight the oldest one can starve for seconds while newer ones run; the ingest
    // applies results in posting order, so every later result waits behind it (bench/notes/telemetry-ingest.md, "Baseline before the first performance pass").
    stricterFIFO: true,
    // The workers decode as this thread does (their own module state starts from the defaults).
    workerData: { slots: opts.slots ?? [], decoder: decoderSetting() },
  });
  return {
    threads,
    // Only a private frames buffer moves; a slot's shared buffers are already in every worker.
    run: (task) => pool.run(task, { transferList: task.frames instanceof ArrayBuffer ? [task.frames] : [] }) as Promise<DecodeResult>,
    close: () => closePool(pool),
  };
}

/** How often {@link closePool} asks a terminated worker that has not exited to terminate again. */
export const TERMINATE_RETRY_MS = 500;
/** How many times it asks before it leaves the worker to the caller's stop deadline. */
export const TERMINATE_TRIES = 20;

/**
 * Closes the pool and makes sure its workers end. Node can lose a `terminate()` that reaches a worker
 * still starting up (seen on Node 22 and 24 when a gateway start failed within a second of creating
 * the pool: the worker finished starting, waited for tasks in piscina's `Atomics.wait` loop and held
 * the process's event loop for good). piscina terminates each worker once, after its running tasks
 * finished, and waits for its `exit`; so a worker piscina asked to terminate that has not exited is
 * asked again every {@link TERMINATE_RETRY_MS}, and the request that finds it running ends it. A
 * worker still finishing a task is never asked.
 */
async function closePool(pool: Piscina): Promise<void> {
  const terminated = new Set<Worker>();
  for (const w of pool.threads) {
    const terminate = w.terminate.bind(w);
    // piscina keeps its worker objects private: its request to terminate is seen on the object itself.
    w.terminate = () => {
      terminated.add(w);
      return terminate();
    };
    w.once('exit', () => terminated.delete(w));
  }
  let settled = false;
  const closing = pool.close().finally(() => {
    settled = true;
  });
  for (let i = 0; i < TERMINATE_TRIES && !settled; i++) {
    await Promise.race([closing, new Promise((r) => setTimeout(r, TERMINATE_RETRY_MS).unref())]);
    if (!settled) for (const w of terminated) void Worker.prototype.terminate.call(w);
  }
  await closing;
}
