/**
 * The robot links of one gateway seen as one `RobotLink`: the gRPC link of the gateway's own agent
 * and any other link a robot may use (VDA 5050 over MQTT). Commands, field rules, missions, alerts and
 * the REST views hold this set and never ask which link a robot uses: a command goes to the link the
 * robot is online on, and every listener hears every link.
 */
import type { Command, FieldRuleSet } from '../gen/fleetgw/v1/robot_link_pb.js';
import type { LinkConflictView, RobotLink, RobotLinkListener } from './robot-link.js';

/** A `RobotLink` that is the union of its member links. */
export class LinkSet implements RobotLink {
  private readonly links: RobotLink[] = [];
  /** Each listener with the unsubscribe function of each member it is registered on. */
  private readonly listeners = new Map<RobotLinkListener, Array<() => void>>();
  private paused = false;
  private durableSource: ((robotId: string) => { epoch: number; seq: number } | undefined) | undefined;

  /**
   * Adds a member link. Every listener registered so far is registered on it too, and it takes the
   * set's read-pause state and durable-point source, so a link added after the consumers started
   * behaves as if it had been there from the start.
   */
  add(link: RobotLink): void {
    this.links.push(link);
    for (const [listener, offs] of this.listeners) offs.push(link.listen(listener));
    if (this.paused) link.setReadPaused(true);
    if (this.durableSource !== undefined) link.setTelemetryDurableSource(this.durableSource);
  }

  /** The member links, in the order they were added. */
  members(): readonly RobotLink[] {
    return this.links;
  }

  listen(listener: RobotLinkListener): () => void {
    const offs = this.links.map((link) => link.listen(listener));
    this.listeners.set(listener, offs);
    return () => {
      for (const off of this.listeners.get(listener) ?? []) off();
      this.listeners.delete(listener);
    };
  }

  isOnline(robotId: string): boolean {
    return this.linkOf(robotId) !== undefined;
  }

  linkConflict(robotId: string): LinkConflictView | null {
    for (const link of this.links) {
      const conflict = link.linkConflict(robotId);
      if (conflict !== null) return conflict;
    }
    return null;
  }

  /** Writes to the link the robot is online on; false (nothing written) when it is on none. */
  send(robotId: string, command: Command): boolean {
    return this.linkOf(robotId)?.send(robotId, command) ?? false;
  }

  sendFieldRules(robotId: string, set: FieldRuleSet): boolean {
    return this.linkOf(robotId)?.sendFieldRules(robotId, set) ?? false;
  }

  closeSession(robotId: string, reason: string): boolean {
    let closed = false;
    for (const link of this.links) closed = link.closeSession(robotId, reason) || closed;
    return closed;
  }

  setReadPaused(paused: boolean): void {
    this.paused = paused;
    for (const link of this.links) link.setReadPaused(paused);
  }

  telemetryDurable(robotId: string, epoch: number, seq: number): void {
    // Every member: a receipt for a robot that just moved links is harmless on the one it left.
    for (const link of this.links) link.telemetryDurable(robotId, epoch, seq);
  }

  setTelemetryDurableSource(source: (robotId: string) => { epoch: number; seq: number } | undefined): void {
    this.durableSource = source;
    for (const link of this.links) link.setTelemetryDurableSource(source);
  }

  /** The first member the robot is online on. */
  private linkOf(robotId: string): RobotLink | undefined {
    for (const link of this.links) if (link.isOnline(robotId)) return link;
    return undefined;
  }
}
