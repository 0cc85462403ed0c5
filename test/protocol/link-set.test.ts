import { describe, expect, it } from 'vitest';
import { create } from '@bufbuild/protobuf';
import { CommandSchema, type Command } from '../../src/gen/fleetgw/v1/robot_link_pb.js';
import { LinkSet } from '../../src/protocol/link-set.js';
import type { RobotLinkListener } from '../../src/protocol/robot-link.js';
import { NoopRobotLink } from '../support/noop-link.js';

/** A member link with a fixed set of online robots that records what it was asked. */
class MemberLink extends NoopRobotLink {
  readonly sent: Array<[string, Command]> = [];
  readonly listeners = new Set<RobotLinkListener>();
  paused = false;
  constructor(private readonly online: Set<string>) {
    super();
  }
  override listen(listener: RobotLinkListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  override isOnline(robotId: string): boolean {
    return this.online.has(robotId);
  }
  override send(robotId: string, command: Command): boolean {
    if (!this.online.has(robotId)) return false;
    this.sent.push([robotId, command]);
    return true;
  }
  override setReadPaused(paused: boolean): void {
    this.paused = paused;
  }
}

describe('LinkSet', () => {
  it('sends each command only on the link its robot is online on', () => {
    const grpc = new MemberLink(new Set(['r1']));
    const mqtt = new MemberLink(new Set(['r2']));
    const set = new LinkSet();
    set.add(grpc);
    set.add(mqtt);
    const command = create(CommandSchema, { commandId: 'c1' });
    expect(set.send('r2', command)).toBe(true);
    expect(set.send('r3', command)).toBe(false);
    expect(grpc.sent).toEqual([]);
    expect(mqtt.sent.map(([id]) => id)).toEqual(['r2']);
    expect(set.isOnline('r1') && set.isOnline('r2') && !set.isOnline('r3')).toBe(true);
  });

  it('gives a link added later the listeners and the read pause registered before', () => {
    const set = new LinkSet();
    set.add(new MemberLink(new Set()));
    const listener: RobotLinkListener = { onOffline: () => {} };
    const off = set.listen(listener);
    set.setReadPaused(true);
    const late = new MemberLink(new Set());
    set.add(late);
    expect(late.listeners.has(listener)).toBe(true);
    expect(late.paused).toBe(true);
    off();
    expect(late.listeners.size).toBe(0);
  });
});
