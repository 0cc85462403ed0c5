/**
 * Runs a synchronous function with a wall-clock bound, on the calling thread.
 *
 * Why not a worker: command checks are synchronous in the submit path (a command is checked, stored
 * and sent in one event turn), and the work bounded here is rare (compiling a new policy) or short
 * (validating one action's arguments). node:vm's `timeout` has a watchdog thread terminate the
 * isolate's running JavaScript, whatever context the running function was created in (including a
 * regular expression mid-match), and turns that into a catchable error in the caller; the cost is
 * one watchdog per call (tens of microseconds).
 *
 * A terminated function does not run its `finally` blocks: state it was changing may be left
 * half-changed, so a caller discards whatever object the function was mutating.
 */
import vm from 'node:vm';

/** The function did not return within its budget and was terminated. */
export class BudgetExceededError extends Error {
  constructor(readonly budgetMs: number) {
    super(`exceeded its time budget of ${budgetMs} ms`);
  }
}

const context = vm.createContext({ job: null as (() => void) | null });
const runner = new vm.Script('job()');

/**
 * Calls `fn` and returns its result, or throws {@link BudgetExceededError} after `budgetMs`.
 * Errors `fn` throws are rethrown unchanged. Not reentrant: `fn` must not call runWithin.
 */
export function runWithin<T>(budgetMs: number, fn: () => T): T {
  let result: { value: T } | null = null;
  context.job = () => {
    result = { value: fn() };
  };
  try {
    runner.runInContext(context, { timeout: Math.max(1, Math.ceil(budgetMs)) });
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') throw new BudgetExceededError(budgetMs);
    throw err;
  } finally {
    context.job = null;
  }
  if (result === null) throw new Error('runWithin: the function did not complete');
  return (result as { value: T }).value;
}
