/** Parsing of what a robot reports for a request/response command. */
import { FREE_FORM_LIMITS, freeFormProblem } from '../store/free-form.js';
import type { JsonObject } from './types.js';

/** Largest payload kept on a record (bytes of JSON); larger ones are stored as null. */
export const MAX_RESULT_PAYLOAD = 64 * 1024;

/**
 * The robot's `payload_json` as an object, or null when empty, too large, not JSON, not an object,
 * or nested beyond the bounds of a client's free-form `values` (src/store/free-form.ts): the robot's
 * report is input like any other; the record keeps only what is well-formed. 64 KiB of brackets nest
 * ~32,000 levels, and past ~4,000 structuredClone and JSON.stringify overflow the stack (a timer's
 * overflow ended the gateway process).
 */
export function parseResultPayload(text: string): JsonObject | null {
  if (text === '' || text.length > MAX_RESULT_PAYLOAD) return null;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    // A robot's malformed result payload: the result is kept with payload null, as for an oversized one
    // (the robot's bug is visible in the record; a log line per result would let a robot flood the log).
    return null;
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return null;
  return freeFormProblem(v, FREE_FORM_LIMITS) === null ? (v as JsonObject) : null;
}
