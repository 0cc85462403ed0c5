/**
 * Deterministic command ids for commands the gateway sends on its own (scheduled fires), so that
 * work resumed after a crash submits the same id again and the command service finds the existing
 * command (`CommandService.submitOnce`) instead of creating a second one.
 *
 * Format: a UUID of RFC 9562 version 8 (custom) whose bits come from a SHA-256 over the
 * length-prefixed parts, so different inputs cannot collide by concatenation. Unlike the time-ordered
 * v7 ids of ordinary commands these land on random B-tree pages; scheduled fires are rare enough
 * for that not to matter. Not secret: an id is never a credential.
 */
import { createHash } from 'node:crypto';

/** The id of the command `kind` for `parts` (e.g. a fire key and a robot id), always the same. */
export function derivedCommandId(kind: string, ...parts: string[]): string {
  const h = createHash('sha256');
  for (const p of [kind, ...parts]) h.update(`${p.length}:`).update(p);
  const b = h.digest().subarray(0, 16);
  b[6] = (b[6]! & 0x0f) | 0x80; // version 8
  b[8] = (b[8]! & 0x3f) | 0x80; // variant 10
  const x = b.toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}
