/**
 * Logs refused inbound messages: at most one warning per robot per window, so a robot flooding bad
 * messages costs one line a window whatever its rate (each message is still counted). The line names
 * the robot, the topic, the reason and the problem's field, and how many more were refused since the
 * robot's last line; never a value (a robot's payload may hold anything).
 *
 * The robots with an open window are a bounded map ({@link MAX_WINDOWS}). When it is full, windows
 * that have ended are dropped; if every one is still open, robots beyond the bound share one window
 * (one line a window for all of them, naming the first).
 */
import type { RejectReason } from './reasons.js';

/** Default length of a robot's silence after a warning. */
export const REJECT_LOG_WINDOW_MS = 60_000;
/** Robots whose window is remembered at once. */
export const MAX_WINDOWS = 4096;
/** The window shared by robots beyond {@link MAX_WINDOWS}. */
const OVERFLOW = '\0overflow';

/** Where warnings go (a pino logger fits). */
export interface InboundLog {
  warn(fields: Record<string, unknown>, msg: string): void;
}

interface Window {
  at: number;
  /** Refused since this window's line, reported in the next line. */
  since: number;
}

export class RejectionLog {
  private readonly windows = new Map<string, Window>();
  /** When ended windows were last dropped: at most once a second, so a full map costs no scan per message. */
  private prunedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly log: InboundLog,
    private readonly windowMs: number,
    private readonly now: () => number,
    private readonly maxWindows = MAX_WINDOWS,
  ) {}

  /** Records a refusal; warns unless the robot (or the overflow group) warned within the window. */
  refused(robotId: string, topic: string, reason: RejectReason, problem: string): void {
    const t = this.now();
    const key = this.keyFor(robotId, t);
    const w = this.windows.get(key);
    if (w !== undefined && t - w.at < this.windowMs) {
      w.since++;
      return;
    }
    const earlier = w?.since ?? 0;
    this.windows.set(key, { at: t, since: 0 });
    this.log.warn(
      { robotId, topic, reason, problem, refusedSinceLastLine: earlier, windowS: this.windowMs / 1000, ...(key === OVERFLOW ? { sharedWindow: true } : {}) },
      'VDA 5050 message refused (docs/vda5050.md, "Bad input"); more from this robot within the window are only counted',
    );
  }

  /** Forgets the robot's window. */
  forget(robotId: string): void {
    this.windows.delete(robotId);
  }

  private keyFor(robotId: string, t: number): string {
    if (this.windows.has(robotId) || this.windows.size < this.maxWindows) return robotId;
    if (t - this.prunedAt >= 1000) {
      this.prunedAt = t;
      for (const [id, w] of this.windows) if (t - w.at >= this.windowMs && id !== OVERFLOW) this.windows.delete(id);
    }
    if (this.windows.size < this.maxWindows) return robotId;
    return OVERFLOW;
  }
}
