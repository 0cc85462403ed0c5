/** The utilization window: bounds and the time slot it is measured in (docs/utilization.md). */

/** Longest window one request may ask for (longer periods: add consecutive windows; every figure is additive). */
export const MAX_WINDOW_MS = 24 * 3600 * 1000;
/** A robot counts as online in a slot of this length when it sent at least one sample in it. */
export const SLOT_MS = 5000;
/** How far past the gateway's clock `to_ms` may reach (client clock skew); the window ends at the gateway's now. */
export const FUTURE_SLACK_MS = 60_000;
/** Runs that started this long before the window are still looked at (a run longer than this is not counted as running). */
export const RUN_LOOKBACK_MS = 7 * 24 * 3600 * 1000;
/** Most runs one request examines. */
export const MAX_RUNS = 20_000;

export interface UtilizationWindow {
  fromMs: number;
  toMs: number;
}

/**
 * The effective window, or the reason it is refused (the route answers 400 naming the parameter).
 * `to_ms` past now (within the slack) is cut to now.
 */
export function checkWindow(fromMs: number, toMs: number, nowMs: number): UtilizationWindow | { param: 'from_ms' | 'to_ms'; detail: string } {
  if (toMs > nowMs + FUTURE_SLACK_MS) return { param: 'to_ms', detail: 'must not be in the future' };
  const to = Math.min(toMs, nowMs);
  if (fromMs >= to) return { param: 'from_ms', detail: 'must be before to_ms (and before now)' };
  if (to - fromMs > MAX_WINDOW_MS) return { param: 'from_ms', detail: `must be at most ${MAX_WINDOW_MS / 3_600_000} hours before to_ms` };
  return { fromMs, toMs: to };
}
