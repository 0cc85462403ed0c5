/**
 * How far V8 lets the old generation grow past what the last full GC kept, before it starts marking
 * again (docs/operations.md, "Memory and garbage collection").
 *
 * Why the gateway sets it: V8 sizes that headroom from how fast marking runs on the main thread, and
 * most of the gateway's marking runs on helper threads, so V8 judges it cheap and keeps the headroom
 * at about 10% of the live heap (~4 MB of the gateway's ~40 MB). Telemetry at 100,000 samples/s then
 * started a full mark every 0.3-0.4 s although little survived each one: 1.2-1.3 µs of CPU per sample
 * went to the GC helper threads, more than the decode itself. At 200% (limit = 3x the live heap) full
 * GCs became rare and the gateway's CPU per sample fell by a third (bench/README.md, "Issue 12 target 1";
 * measured with telemetry-throughput.mjs at 100k and 400k samples/s). The cost is memory: at most
 * twice the live heap more (~80 MB for a 40 MB heap), and in practice less, because the young
 * generation's collections keep most garbage out of the old one.
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
}
