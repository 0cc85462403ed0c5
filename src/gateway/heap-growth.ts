/**
 * How far V8 lets the old generation grow past what the last full GC kept, before it starts marking
 * again (docs/operations.md, "Memory and garbage collection").
 *
 * Why the gateway sets it: V8 sizes that headroom from how fast marking runs on the main thread, and
 * most of the gateway's marking runs on helper threads, so V8 judges it cheap and keeps the headroom
 * at about 10% of the live heap (~4 MB of the gateway's ~40 MB). Telemetry at 100,000 samples/s then
 * started a full mark every 0.3-0.4 s although little survived each one: 1.2-1.3 µs of CPU per sample
 * went to the GC helper threads, more than the decode itself. The default, 100% (limit = 2x the live
 * heap), took the gateway's CPU per sample at 100,000 samples/s from 2.4 to ~1.5 µs (200%: ~1.3 µs,
 * but ~40 MB more RSS at 1,000 robots x 10 Hz, past the 300 MB that load is allowed; bench/README.md,
 * "Issue 12 targets 1 and 2, same session"). The cost is memory: up to one more live heap of garbage
 * (~40 MB), less in practice, because the young generation's collections keep most garbage out of the
 * old one.
 */
import { setFlagsFromString } from 'node:v8';

/**
 * Sets V8's old-generation growing factor to 1 + percent/100 for this process (every isolate of it:
 * the decode workers as well). V8 reads the flag each time it recomputes its limits, so it takes
 * effect at the next GC.
 * @param percent from FLEETGW_HEAP_GROWING_PERCENT (config.ts), a positive integer.
 */
export function applyHeapGrowth(percent: number, setFlags: (flags: string) => void = setFlagsFromString): void {
  if (!Number.isSafeInteger(percent) || percent < 1) throw new Error(`heap growing percent must be a positive integer, got ${percent}`);
  setFlags(`--heap-growing-percent=${percent}`);
  applied = percent;
}

/** What this process last set (V8 has no API to read a flag back); null before any gateway started. */
export function appliedHeapGrowingPercent(): number | null {
  return applied;
}

let applied: number | null = null;
