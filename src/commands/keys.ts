/**
 * LMDB key shapes of the command outbox. The seq is fixed-width hex so LMDB's byte order is the
 * per-robot send order and one range read returns a robot's backlog already sorted.
 */

/** `<robotId>/<seq as 16 hex digits>` in the `outbox` db. */
export function outboxKey(robotId: string, seq: number): string {
  return `${robotId}/${seq.toString(16).padStart(16, '0')}`;
}

/** Splits an outbox key; null for a key this version did not write. */
export function parseOutboxKey(key: string): { robotId: string; seq: number } | null {
  const slash = key.lastIndexOf('/');
  if (slash <= 0 || key.length - slash - 1 !== 16) return null;
  const seq = Number.parseInt(key.slice(slash + 1), 16);
  return Number.isSafeInteger(seq) && seq > 0 ? { robotId: key.slice(0, slash), seq } : null;
}

/** `meta` key holding the last seq handed out for a robot (survives outbox entries being removed). */
export function seqMetaKey(robotId: string): string {
  return `commandSeq/${robotId}`;
}
