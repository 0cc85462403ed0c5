/**
 * What master control publishes, queued per robot in two bounded lanes: stops (and mission pauses)
 * ahead of everything else, so that a robot with a long backlog of orders, or a slow broker socket,
 * never holds another robot's stop. The queue drains while the MQTT socket takes writes and waits
 * for its `drain` when it does not.
 *
 * Bounds: {@link URGENT_PER_ROBOT} urgent and {@link NORMAL_PER_ROBOT} other messages per robot.
 * When a lane is full its oldest message is dropped (counted): the command it carried is still
 * awaited in the robot's state, so the command service's resend publishes it again (delivery.ts).
 */

export const URGENT_PER_ROBOT = 16;
export const NORMAL_PER_ROBOT = 64;

/** One message to publish. */
export interface Publication {
  topic: string;
  payload: Buffer;
}

/** Publishes one message to `robotId`; returns false when the socket wants a `drain` before more. */
export type PublishFn = (p: Publication, robotId: string) => boolean;

class Lanes {
  readonly urgent: Publication[] = [];
  readonly normal: Publication[] = [];
}

export class PublishQueue {
  private readonly byRobot = new Map<string, Lanes>();
  /** Robots with urgent messages queued, in the order they got them. */
  private readonly urgentRobots = new Set<string>();
  /** Robots with other messages queued (round robin: a robot goes to the back after each message). */
  private readonly normalRobots = new Set<string>();
  private blocked = false;
  private scheduled = false;
  private dropped = 0;

  /** @param onDrop told of each message dropped from a full lane (the robot it was for) */
  constructor(
    private readonly publish: PublishFn,
    private readonly onDrop: (robotId: string) => void,
  ) {}

  /** Messages dropped from a full lane so far. */
  get droppedCount(): number {
    return this.dropped;
  }

  /** Queues a message for a robot and starts draining (in a later turn: a burst of sends is batched). */
  push(robotId: string, p: Publication, urgent: boolean): void {
    let lanes = this.byRobot.get(robotId);
    if (!lanes) this.byRobot.set(robotId, (lanes = new Lanes()));
    const lane = urgent ? lanes.urgent : lanes.normal;
    if (lane.length >= (urgent ? URGENT_PER_ROBOT : NORMAL_PER_ROBOT)) {
      lane.shift();
      this.dropped++;
      this.onDrop(robotId);
    }
    lane.push(p);
    (urgent ? this.urgentRobots : this.normalRobots).add(robotId);
    if (urgent) this.drain();
    else this.schedule();
  }

  /** Forgets a robot's queued messages (it went offline: they are resent from the outbox later). */
  dropRobot(robotId: string): void {
    this.byRobot.delete(robotId);
    this.urgentRobots.delete(robotId);
    this.normalRobots.delete(robotId);
  }

  /** The socket can take writes again. */
  resume(): void {
    this.blocked = false;
    this.drain();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.drain();
    });
  }

  /** Publishes until the queue is empty or the socket pushes back: urgent lanes first. */
  private drain(): void {
    while (!this.blocked) {
      const next = this.take();
      if (next === null) return;
      if (!this.publish(next.p, next.robotId)) this.blocked = true;
    }
  }

  private take(): { p: Publication; robotId: string } | null {
    for (const robotId of this.urgentRobots) {
      const lanes = this.byRobot.get(robotId);
      const p = lanes?.urgent.shift();
      if (!lanes || lanes.urgent.length === 0) this.urgentRobots.delete(robotId);
      if (p) return { p, robotId };
    }
    for (const robotId of this.normalRobots) {
      const lanes = this.byRobot.get(robotId);
      const p = lanes?.normal.shift();
      this.normalRobots.delete(robotId);
      if (lanes && lanes.normal.length > 0) this.normalRobots.add(robotId);
      if (p) return { p, robotId };
    }
    return null;
  }
}
