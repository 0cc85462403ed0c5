/**
 * `headerId` ordering per robot and topic. The standard increments a topic's headerId by 1 with each
 * message the robot sends; the gateway accepts a message only if its headerId is above the last one
 * it accepted on that robot's topic (gaps are fine: messages may be lost, QoS 0).
 *
 * A robot that restarts starts its headerIds again (vda-5050-lib at 0). It announces the new session
 * with a `connection` ONLINE message, so ONLINE re-arms every topic of the robot: the next message on
 * each is accepted whatever its headerId, and one that went back (a reset) is counted. A robot that
 * restarts without ONLINE (against the standard) has its messages refused as out of order until its
 * headerIds pass the last accepted ones. A headerId that wraps (the 32-bit counter passing
 * 4294967295 back to 0) is accepted as a wrap, not refused.
 *
 * `connection` messages are not ordered: the last will (CONNECTIONBROKEN) is composed when the robot
 * connects, before its ONLINE, so it carries the lower headerId and is published by the broker later.
 *
 * Memory: one entry per robot that sent a message, at most `maxRobots`; when full, the robot
 * remembered longest ago is forgotten (its next message is taken as the first of a session).
 */

/** Topics whose headerIds are ordered, and their slot in a robot's entry. */
const ORDERED = { state: 0, visualization: 1, factsheet: 2 } as const;
type OrderedTopic = keyof typeof ORDERED;
const SLOTS = 3;

/** A headerId this close to 2^32 followed by one this small is taken as the counter wrapping. */
const WRAP_MARGIN = 0x10000;
const WRAP_TOP = 0x1_0000_0000;

export type OrderVerdict = 'first' | 'next' | 'reset' | 'out_of_order';

export class HeaderOrder {
  /** Per robot: last accepted headerId per slot, then an "armed by ONLINE" flag per slot. */
  private readonly robots = new Map<string, Float64Array>();

  constructor(private readonly maxRobots: number) {}

  /** Whether `topic` is ordered by headerId. */
  static orders(topic: string): topic is OrderedTopic {
    return topic === 'state' || topic === 'visualization' || topic === 'factsheet';
  }

  /** Judges `headerId` on the robot's topic and, unless it is out of order, records it. */
  check(robotId: string, topic: OrderedTopic, headerId: number): OrderVerdict {
    const slot = ORDERED[topic];
    let entry = this.robots.get(robotId);
    if (entry === undefined) {
      entry = this.add(robotId);
      entry[slot] = headerId;
      return 'first';
    }
    const last = entry[slot]!;
    if (Number.isNaN(last)) {
      entry[slot] = headerId;
      entry[SLOTS + slot] = 0;
      return 'first';
    }
    if (entry[SLOTS + slot] === 1) {
      entry[slot] = headerId;
      entry[SLOTS + slot] = 0;
      return headerId > last ? 'next' : 'reset';
    }
    if (headerId > last || (last >= WRAP_TOP - WRAP_MARGIN && headerId < WRAP_MARGIN)) {
      entry[slot] = headerId;
      return 'next';
    }
    return 'out_of_order';
  }

  /** The robot announced a new session (connection ONLINE): each topic takes its next headerId as is. */
  sessionStarted(robotId: string): void {
    const entry = this.robots.get(robotId);
    if (entry !== undefined) entry.fill(1, SLOTS);
  }

  /** Forgets the robot (its binding was removed). */
  forget(robotId: string): void {
    this.robots.delete(robotId);
  }

  /** Robots remembered. */
  get size(): number {
    return this.robots.size;
  }

  private add(robotId: string): Float64Array {
    if (this.robots.size >= this.maxRobots) {
      const oldest = this.robots.keys().next();
      if (oldest.done !== true) this.robots.delete(oldest.value);
    }
    const entry = new Float64Array(SLOTS * 2).fill(Number.NaN, 0, SLOTS);
    this.robots.set(robotId, entry);
    return entry;
  }
}
