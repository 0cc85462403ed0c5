/**
 * Per-robot state of acknowledged telemetry (docs/robot-link.md "Acknowledged
 * telemetry"): the highest `seq` received and the highest `seq` durable (in the store or the disk
 * spool), per robot and agent `epoch`.
 *
 * - A batch whose `seq` is not above the robot's received `seq` of the same epoch is a resend of one
 *   the gateway already holds (in the pipeline, the spool or the store): it is dropped, so replays
 *   after a reconnect or a gateway restart create no duplicate row.
 * - A batch of a new epoch (the agent restarted: its resend buffer died with it) starts the robot over.
 * - Durable points only grow; each advance is reported to the listener (the robot link writes it to
 *   the robot as a receipt).
 *
 * Bound: one small entry per robot that ever sent telemetry to this process (the ingest takes an entry
 * at a robot's first frame; plus the ones restored from the spool's checkpoint): robots are
 * registered, so this is bounded by the fleet.
 * Work: at most a Map lookup per batch (none when the caller keeps the robot's entry), never per sample.
 */

/** A robot's durable point: every batch of `epoch` up to `seq` is durable. */
export interface DurablePoint {
  epoch: number;
  seq: number;
}

/** One robot's state; the ingest keeps a reference per robot (entry()) so a batch needs no lookup. */
export interface RobotAcks {
  epoch: number;
  received: number;
  durable: number;
}

export class AckTracker {
  private readonly robots = new Map<string, RobotAcks>();
  private listener: (robotId: string, epoch: number, seq: number) => void = () => {};
  /** Sequenced batches dropped because the gateway already held them. */
  duplicateBatches = 0;

  /** Sets the one receiver of durable advances (the gateway wires the robot link). */
  onDurable(listener: (robotId: string, epoch: number, seq: number) => void): void {
    this.listener = listener;
  }

  /**
   * A sequenced batch arrived: true to ingest it, false when it is a resend of one already held.
   * A resend of a durable batch re-announces the durable point (the robot missed the receipt).
   */
  admit(robotId: string, epoch: number, seq: number): boolean {
    return this.admitEntry(this.entry(robotId), robotId, epoch, seq);
  }

  /**
   * The robot's entry, created empty (epoch 0, nothing received or durable: the same as no entry for
   * every question asked here). It stays the robot's entry for the life of the tracker.
   */
  entry(robotId: string): RobotAcks {
    let r = this.robots.get(robotId);
    if (r === undefined) {
      r = { epoch: 0, received: 0, durable: 0 };
      this.robots.set(robotId, r);
    }
    return r;
  }

  /** admit() on an entry the caller holds (from entry()). */
  admitEntry(r: RobotAcks, robotId: string, epoch: number, seq: number): boolean {
    if (r.epoch !== epoch) {
      r.epoch = epoch;
      r.received = seq;
      r.durable = 0;
      return true;
    }
    if (seq > r.received) {
      r.received = seq;
      return true;
    }
    this.duplicateBatches++;
    if (seq <= r.durable) this.listener(robotId, r.epoch, r.durable);
    return false;
  }

  /** Batches up to these points are durable: advance and report (entries of an old epoch are ignored). */
  markDurable(points: ReadonlyMap<string, DurablePoint>): void {
    for (const [robotId, p] of points) {
      const r = this.robots.get(robotId);
      if (r === undefined || r.epoch !== p.epoch || p.seq <= r.durable) continue;
      r.durable = p.seq;
      this.listener(robotId, p.epoch, p.seq);
    }
  }

  /** Start-up: what the spool says was durable before the restart (received = durable). */
  restore(points: ReadonlyMap<string, DurablePoint>): void {
    for (const [robotId, p] of points) {
      const r = this.entry(robotId);
      if (r.epoch === p.epoch && r.durable >= p.seq) continue;
      // In place: an entry handed out by entry() stays the robot's.
      r.epoch = p.epoch;
      r.received = p.seq;
      r.durable = p.seq;
    }
  }

  /** The robot's durable point, if it ever had one. */
  durableOf(robotId: string): DurablePoint | undefined {
    const r = this.robots.get(robotId);
    return r === undefined || r.durable === 0 ? undefined : { epoch: r.epoch, seq: r.durable };
  }

  /** Every robot's durable point (the spool checkpoint). */
  snapshot(): Map<string, DurablePoint> {
    const out = new Map<string, DurablePoint>();
    for (const [id, r] of this.robots) if (r.durable > 0) out.set(id, { epoch: r.epoch, seq: r.durable });
    return out;
  }
}

/** Merges `from` into `into`, keeping per robot the point of the later epoch seen, else the higher seq. */
export function mergePoints(into: Map<string, DurablePoint>, from: ReadonlyMap<string, DurablePoint>): void {
  for (const [id, p] of from) {
    const q = into.get(id);
    if (q === undefined || q.epoch !== p.epoch || p.seq > q.seq) into.set(id, p);
  }
}
