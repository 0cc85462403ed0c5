/**
 * Each VDA 5050 robot's stop mark, kept across gateway restarts: the highest seq of a stop (or
 * mission pause) master control published to the robot. A motion command with a lower seq was issued
 * before that stop and is answered `superseded_by_stop` instead of being published after it, which
 * would undo the stop. The gRPC agent keeps the same mark on the robot (src/agent/command-ledger.ts);
 * a VDA 5050 robot keeps nothing of the kind, so master control keeps it, in LMDB, so that a start
 * lost before a gateway restart cannot undo a stop the robot took after it.
 *
 * Written when the robot's state shows a stop (an asynchronous put, in the turn the stop's ack is
 * written, so in its transaction); a stop the robot had not shown when the gateway died is still in
 * the outbox, and the restart's flush sends stops first, which raises the mark again in memory.
 */
import type { Store } from '../../store/lmdb.js';
import { STOP_MARK_PREFIX, stopMarkKey } from './keys.js';

/** The `meta` prefix the stop marks take (the `vda5050` plugin's storage claim). */
export const STOP_MARKS_META_PREFIX = STOP_MARK_PREFIX;

/** Where master control reads and raises stop marks. */
export interface StopMarks {
  /** The robot's mark (0 when none). */
  get(robotId: string): bigint;
  /** Raises the robot's mark to `seq` (never lowers it). */
  raise(robotId: string, seq: bigint): void;
}

/** Stop marks in the `meta` database, as decimal strings (a seq is a uint64). */
export class LmdbStopMarks implements StopMarks {
  constructor(
    private readonly store: Pick<Store, 'meta'>,
    private readonly onWriteError: (err: unknown, robotId: string) => void,
  ) {}

  get(robotId: string): bigint {
    const v = this.store.meta.get(stopMarkKey(robotId));
    if (typeof v !== 'string' || !/^\d{1,20}$/.test(v)) return 0n;
    return BigInt(v);
  }

  raise(robotId: string, seq: bigint): void {
    if (seq <= this.get(robotId)) return;
    this.store.meta.put(stopMarkKey(robotId), seq.toString()).catch((err: unknown) => this.onWriteError(err, robotId));
  }
}
