/** Parsing of what a robot reports for a request/response command. */
import type { JsonObject } from './types.js';

/** Largest payload kept on a record (bytes of JSON); larger ones are stored as null. */
export const MAX_RESULT_PAYLOAD = 64 * 1024;

/**
 * The robot's `payload_json` as an object, or null when empty, too large, not JSON, or not an
 * object (the robot's report is input like any other; the record keeps only what is well-formed).
 */
export function parseResultPayload(text: string): JsonObject | null {
  if (text === '' || text.length > MAX_RESULT_PAYLOAD) return null;
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as JsonObject) : null;
  } catch {
    return null;
  }
}
