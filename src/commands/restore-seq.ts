/**
 * After a data dir is restored from a backup, each robot's command seq reservation is whatever it was
 * when the backup was taken, while the robots may have applied higher seqs since. A seq handed out
 * again would be refused `stale_seq` by the agent (or, worse, be mistaken for a command it already
 * applied) until the robot's Hello moves the counter (SeqCounter.raise) — and commands submitted
 * before that reconnect already carry their seq. So a restore moves every robot's reservation
 * {@link RESTORE_SEQ_SKIP} ahead: more commands than any robot is sent between a backup and its
 * restore, and still far inside the safe-integer range seqs live in (the gap itself is harmless:
 * seq-counter.ts).
 */
import type { Store } from '../store/lmdb.js';
import { seqMetaKey } from './keys.js';
import { allRobotIds } from '../store/identity-reads.js';

/** 2^32 seqs: ~10 years of commands at 10 per second to one robot. */
export const RESTORE_SEQ_SKIP = 2 ** 32;

/**
 * Raises every registered robot's reservation by {@link RESTORE_SEQ_SKIP} in one transaction.
 * Run on a restored store before any gateway serves it. Returns how many robots were moved.
 */
export async function skipSeqsAfterRestore(store: Store): Promise<number> {
  let moved = 0;
  await store.root.transaction(() => {
    for (const robotId of allRobotIds(store)) {
      const stored = store.meta.get(seqMetaKey(robotId));
      const reserved = typeof stored === 'number' && Number.isSafeInteger(stored) && stored > 0 ? stored : 0;
      store.meta.putSync(seqMetaKey(robotId), reserved + RESTORE_SEQ_SKIP);
      moved++;
    }
  });
  return moved;
}
