/**
 * The live stream's topics and rate classes (stream-hub.ts publishes through them): topic names per
 * (encoding, rate class, fleet[, robot]), and the per-robot decision whether a rate class takes a
 * sample (server-side decimation, docs/telemetry-stream.md "Decimation").
 */
import { RATE_CLASSES_HZ, type StreamEncoding } from './stream-protocol.js';

/** Rate classes: 0 is every sample, c >= 1 is RATE_CLASSES_HZ[c - 1]. */
export const CLASSES = RATE_CLASSES_HZ.length + 1;
/** Encodings by index (the `e` of topic names). */
export const ENCODINGS: readonly StreamEncoding[] = ['json', 'binary'];
/**
 * A class takes a sample up to a quarter period early, at most 25 ms: a robot's timer jitter then
 * costs no samples, and a slower class still takes the sample nearest its grid (not one a whole
 * input period early).
 */
const EARLY_FRACTION = 0.25;
const EARLY_MAX_MS = 25;

/** Per robot of a watched fleet: when each rate class is next due, and its topic names. */
export interface RobotLive {
  next: Float64Array;
  /** Topic name by encoding * CLASSES + class, built on first use. */
  names: (string | undefined)[];
}

/**
 * The topic of every sample of a fleet, for encoding `e` and rate class `c`. Topic names carry the
 * fleet id's length, so no pair of ids can spell another pair's topic (ids may contain the separator).
 */
export function fleetTopic(e: number, c: number, fleetId: string): string {
  return `${e}${c}|${fleetId.length}|${fleetId}`;
}
/** The topic of one robot's samples, for encoding `e` and rate class `c` (see {@link fleetTopic}). */
export function robotTopic(e: number, c: number, fleetId: string, robotId: string): string {
  return `${fleetTopic(e, c, fleetId)}|${robotId}`;
}
/** The rate class index of a parsed `max_hz` (already one of RATE_CLASSES_HZ, or null: 0, every sample). */
export function classOf(maxHz: number | null): number {
  return maxHz === null ? 0 : RATE_CLASSES_HZ.indexOf(maxHz as (typeof RATE_CLASSES_HZ)[number]) + 1;
}

/**
 * True when rate class `c` takes a sample at robot clock `t` (ms), and then books it. The next one
 * is due a period later on a fixed grid (so the average never exceeds the class's rate); a sample
 * a period or more late, or a clock that went back, restarts the grid at `t`.
 */
export function takeSample(robot: RobotLive, c: number, t: number): boolean {
  const period = 1000 / RATE_CLASSES_HZ[c - 1]!;
  const next = robot.next[c]!;
  if (t < next - Math.min(period * EARLY_FRACTION, EARLY_MAX_MS) && next - t <= period) return false;
  robot.next[c] = t - next >= period || next - t > period ? t + period : next + period;
  return true;
}
