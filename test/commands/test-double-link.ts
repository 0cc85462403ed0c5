/**
 * TEST DOUBLE of the RobotLink interface (src/protocol/robot-link.ts), for the command service's core
 * tests only: it records what the service sends and lets a test play the robot's side (connect,
 * disconnect, ack) deterministically. The real gRPC link + agent are exercised in real-link.test.ts.
 */
import { create } from '@bufbuild/protobuf';
import { CommandAckSchema, CommandAck_Status, type Command, type CommandPolicy } from '../../src/gen/fleetgw/v1/robot_link_pb.js';
import type { RobotLinkListener } from '../../src/protocol/robot-link.js';
import { NoopRobotLink } from '../support/noop-link.js';

export class TestDoubleLink extends NoopRobotLink {
  private readonly listeners = new Set<RobotLinkListener>();
  private readonly online = new Set<string>();
  /** Every command written, per robot, in write order. */
  readonly sent = new Map<string, Command[]>();

  override listen(listener: RobotLinkListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  override isOnline(robotId: string): boolean {
    return this.online.has(robotId);
  }

  override send(robotId: string, command: Command): boolean {
    if (!this.online.has(robotId)) return false;
    const list = this.sent.get(robotId) ?? [];
    list.push(command);
    this.sent.set(robotId, list);
    return true;
  }

  sentTo(robotId: string): Command[] {
    return this.sent.get(robotId) ?? [];
  }

  connect(robotId: string, lastAppliedSeq = 0n, policy?: CommandPolicy): void {
    this.online.add(robotId);
    for (const l of this.listeners) {
      l.onOnline?.(robotId, { fleetId: 'f', capabilities: [], agentVersion: 'test-double', lastAppliedSeq, ...(policy ? { policy } : {}) });
    }
  }

  disconnect(robotId: string): void {
    this.online.delete(robotId);
    for (const l of this.listeners) l.onOffline?.(robotId, 'test');
  }

  ack(robotId: string, commandId: string, status: 'received' | 'rejected' = 'received', reason = ''): void {
    const msg = create(CommandAckSchema, {
      commandId,
      status: status === 'received' ? CommandAck_Status.RECEIVED : CommandAck_Status.REJECTED,
      reason,
    });
    for (const l of this.listeners) l.onAck?.(robotId, msg);
  }
}
