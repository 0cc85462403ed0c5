/**
 * The time source of the scheduler and the mission runtime. Production uses the system clock and real
 * timers; tests drive a {@link ManualClock} to cross hours, days and DST changes in microseconds.
 */

export interface Clock {
  now(): number;
  /** Calls `fn` once after `ms` (>= 0); returns a cancel function. */
  setTimer(fn: () => void, ms: number): () => void;
}

/**
 * Longest delay a Node timer takes (2^31 - 1 ms, about 24.8 days): a longer one fires after 1 ms.
 * Timers asked for longer fire at this bound instead, early; every caller re-checks what is due when
 * its timer fires and arms again (the scheduler for a schedule months or years ahead).
 */
export const MAX_TIMER_MS = 2_147_483_647;

/** Wall clock and unref'd Node timers (a pending fire never keeps a stopping process alive). */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer: (fn, ms) => {
    const t = setTimeout(fn, Math.min(MAX_TIMER_MS, Math.max(0, ms)));
    t.unref();
    return () => clearTimeout(t);
  },
};

interface ManualTimer {
  at: number;
  seq: number;
  fn: () => void;
}

/** A clock that moves only when told; timers run synchronously inside {@link ManualClock.advance}. */
export class ManualClock implements Clock {
  private t: number;
  private seq = 0;
  private timers: ManualTimer[] = [];

  constructor(startMs: number) {
    this.t = startMs;
  }

  now(): number {
    return this.t;
  }

  setTimer(fn: () => void, ms: number): () => void {
    const timer = { at: this.t + Math.max(0, ms), seq: this.seq++, fn };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((x) => x !== timer);
    };
  }

  /** Moves time forward by `ms`, running every timer that falls due, in time order. */
  advance(ms: number): void {
    this.set(this.t + ms);
  }

  /** Moves time to `ms` (never backwards), running due timers in order. */
  set(ms: number): void {
    const target = Math.max(this.t, ms);
    for (;;) {
      this.timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.timers[0];
      if (!next || next.at > target) break;
      this.timers.shift();
      this.t = Math.max(this.t, next.at);
      next.fn();
    }
    this.t = target;
  }
}
