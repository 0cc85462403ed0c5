/**
 * How far V8 lets the old generation grow past what the last full GC kept, before it starts marking
 * again (docs/operations.md, "Memory and garbage collection").
 *
 * Why the gateway sets it: V8 sizes that headroom from how fast marking runs on the main thread, and
 * most of the gateway's marking runs on helper threads, so V8 judges it cheap and keeps the headroom
 * at about 10% of the live heap (a few MB). Telemetry at a high rate then started a full mark several
 * times a second although little survived each one, and the GC helper threads spent more CPU per
 * sample than the decode itself. The default, 100% (limit = 2x the live heap), cut the gateway's CPU
 * per sample there (200% a little more, but past the memory allowed at 1,000 robots x 10 Hz):
 * bench/notes/telemetry-ingest.md, "Targets 1 and 2, same session". The cost is memory: up to
 * one more live heap of garbage, less in practice, because the young generation's collections keep
 * most garbage out of the old one.
 *
 * Why it follows the load (HeapGrowthPolicy): at low rates full GCs are cheap anyway and memory is
 * what counts. At 1,000 robots x 10 Hz, with the telemetry fast path (little young garbage, so full
 * GCs come minutes apart), 100% let RSS climb past the memory that load is allowed over 10 minutes;
 * 50% held it under at the same CPU. At peak, 50% cost markedly more CPU per sample
 * (bench/notes/telemetry-ingest.md, "Telemetry fast path"). So the gateway starts at the low-load value
 * and switches to the peak value while telemetry runs above 50,000 samples/s, back below 25,000.
 */
import { setFlagsFromString } from 'node:v8';

/**
 * Sets V8's old-generation growing factor to 1 + percent/100 for this process (every isolate of it:
 * the decode workers as well). V8 reads the flag each time it recomputes its limits, so it takes
 * effect at the next GC.
 * @param percent from FLEETGW_HEAP_GROWING_PERCENT (config.ts), a positive integer.
 */
export function applyHeapGrowth(percent: number, setFlags: (flags: string) => void = setFlagsFromString): void {
  checkPercent(percent);
  setFlags(`--heap-growing-percent=${percent}`);
  applied = percent;
}

function checkPercent(percent: number): void {
  if (!Number.isSafeInteger(percent) || percent < 1) throw new Error(`heap growing percent must be a positive integer, got ${percent}`);
}

/** What this process last set (V8 has no API to read a flag back); null before any gateway started. */
export function appliedHeapGrowingPercent(): number | null {
  return applied;
}

let applied: number | null = null;

/**
 * How often the policy reads the telemetry rate. Every second, not every 5: at peak the low-load
 * headroom left little room for external memory (the row buffers a starting peak allocates count
 * toward V8's limit), and until the switch came, seconds after telemetry began, V8 ran a full GC
 * several times a second (bench/notes/telemetry-ingest.md, "Target 1: full GCs as a peak begins").
 * The hysteresis below keeps a per-second rate
 * from flapping.
 */
export const FOLLOW_INTERVAL_MS = 1_000;

/** Samples per second above which the peak headroom applies. */
export const PEAK_SAMPLES_PER_S = 50_000;
/** ... and below which the low-load headroom applies again (the gap keeps a load near one bound from flapping). */
export const LOW_SAMPLES_PER_S = 25_000;

/**
 * Chooses the heap growing percent from the telemetry rate: `lowPercent` until the rate exceeds
 * {@link PEAK_SAMPLES_PER_S}, then `peakPercent` until it falls under {@link LOW_SAMPLES_PER_S}.
 */
export class HeapGrowthPolicy {
  private current: number;
  private peak = false;

  /** Applies `lowPercent` now (a starting gateway has no telemetry yet); both values are checked now, not at the first switch. */
  constructor(
    private readonly lowPercent: number,
    private readonly peakPercent: number,
    private readonly setFlags: (flags: string) => void = setFlagsFromString,
  ) {
    checkPercent(peakPercent);
    applyHeapGrowth(lowPercent, setFlags);
    this.current = lowPercent;
  }

  /** The percent in force. */
  get percent(): number {
    return this.current;
  }

  /**
   * True from a rate above {@link PEAK_SAMPLES_PER_S} until one below {@link LOW_SAMPLES_PER_S} (false
   * at start), whether or not the percent changed with it (both values may be equal).
   */
  get atPeak(): boolean {
    return this.peak;
  }

  /**
   * Reads the telemetry sample counter every `intervalMs` ({@link FOLLOW_INTERVAL_MS} by default) and
   * observes its rate; `onSwitch` hears of each switch of the percent (the gateway logs it), `onPeak`
   * of each change of {@link atPeak} (the gateway tells the ingest: its row buffers follow the peak
   * too, whatever the percents). Returns the stop function (the timer does not hold the process).
   */
  follow(
    samplesIn: () => number,
    onSwitch: (percent: number, samplesPerS: number) => void,
    intervalMs = FOLLOW_INTERVAL_MS,
    onPeak?: (atPeak: boolean) => void,
  ): () => void {
    let last = samplesIn();
    let lastAtMs = Date.now();
    const timer = setInterval(() => {
      const samples = samplesIn();
      const now = Date.now();
      const rate = ((samples - last) * 1000) / Math.max(1, now - lastAtMs);
      last = samples;
      lastAtMs = now;
      const wasPeak = this.peak;
      const switched = this.observe(rate);
      if (switched !== null) onSwitch(switched, rate);
      if (this.peak !== wasPeak) onPeak?.(this.peak);
    }, intervalMs);
    timer.unref();
    return () => clearInterval(timer);
  }

  /**
   * Takes the telemetry rate of the last interval; returns the percent it switched to, or null when
   * it stays (the caller logs switches).
   */
  observe(samplesPerS: number): number | null {
    let want = this.current;
    if (samplesPerS > PEAK_SAMPLES_PER_S) {
      want = this.peakPercent;
      this.peak = true;
    } else if (samplesPerS < LOW_SAMPLES_PER_S) {
      want = this.lowPercent;
      this.peak = false;
    }
    if (want === this.current) return null;
    applyHeapGrowth(want, this.setFlags);
    this.current = want;
    return want;
  }
}
