/**
 * Counts the robot strings the decoders cut to their bounds (sample-table.ts `bound`) and logs them:
 * one warning per robot per window, so a robot that sends an over-long mode at 10 Hz costs one line a
 * minute, not ten a second. The line names the robot, the reasons and their counts and the limits,
 * never a value (a robot's strings are its payload, and may be anything).
 */
import type { Logger } from 'pino';
import { BOUND_LIMITS, BOUND_REASONS } from '../sample/index.js';

/** How long a robot's warning silences the next ones. */
export const BOUND_LOG_WINDOW_MS = 60_000;
/** Robots whose window is remembered; past it, windows that have ended are forgotten (a bounded map). */
const MAX_REMEMBERED = 4096;

export class BoundReport {
  /** Bounded values since start, by reason index (BOUND_REASONS). */
  readonly totals = new Array<number>(BOUND_REASONS.length).fill(0);
  private readonly lastLog = new Map<string, number>();

  constructor(private readonly log: Logger, private readonly now: () => number) {}

  /**
   * Adds a decode result's bounded values, triples (robotIndex, reason, count) over `robotIds`, and
   * warns for each robot not warned about within the window.
   */
  record(bounded: Uint32Array, robotIds: readonly string[]): void {
    let robot = -1;
    let counts: Record<string, number> | null = null;
    const flush = (): void => {
      if (counts !== null) this.warn(robotIds[robot] ?? '?', counts);
      counts = null;
    };
    for (let i = 0; i + 2 < bounded.length; i += 3) {
      const reason = bounded[i + 1]!;
      const n = bounded[i + 2]!;
      this.totals[reason] = (this.totals[reason] ?? 0) + n;
      if (bounded[i] !== robot) {
        flush();
        robot = bounded[i]!;
      }
      counts ??= {};
      const name = BOUND_REASONS[reason] ?? String(reason);
      counts[name] = (counts[name] ?? 0) + n;
    }
    flush();
  }

  private warn(robotId: string, counts: Record<string, number>): void {
    const t = this.now();
    const last = this.lastLog.get(robotId);
    if (last !== undefined && t - last < BOUND_LOG_WINDOW_MS) return;
    if (last === undefined && this.lastLog.size >= MAX_REMEMBERED) {
      for (const [id, at] of this.lastLog) if (t - at >= BOUND_LOG_WINDOW_MS) this.lastLog.delete(id);
      // Every remembered window still open: this robot is not warned about (it is still counted).
      if (this.lastLog.size >= MAX_REMEMBERED) return;
    }
    this.lastLog.set(robotId, t);
    const limits: Record<string, number> = {};
    for (const name of Object.keys(counts)) limits[name] = BOUND_LIMITS[BOUND_REASONS.indexOf(name)]!;
    this.log.warn({ robotId, bounded: counts, limits, windowS: BOUND_LOG_WINDOW_MS / 1000 },
      'telemetry strings over their bound were cut (docs/robot-link.md, "Bounds on telemetry strings"); more from this robot within the window are only counted');
  }
}
