/** The inbound gate's checks, their order, the headerId policy, the log bound and the counters. */
import { describe, expect, test, vi } from 'vitest';
import { createInboundGate, REJECT_REASONS, type InboundGate, type RejectReason } from '../../src/vda5050/inbound/index.js';
import { RejectionLog } from '../../src/vda5050/inbound/rejection-log.js';
import { prng } from '../support/prng.js';
import { VALID } from './inbound-corpus.js';

const A = { robotId: 'robot-a', fleetId: 'f', binding: { manufacturer: 'Acme', serialNumber: 'sn-1' } };
const B = { robotId: 'robot-b', fleetId: 'f', binding: { manufacturer: 'Acme', serialNumber: 'sn-2' } };

interface Logged { fields: Record<string, unknown>; msg: string }

function makeGate(opts: { maxBytes?: number; version?: string; now?: () => number; maxOrderedRobots?: number } = {}): { gate: InboundGate; lines: Logged[] } {
  const lines: Logged[] = [];
  const gate = createInboundGate({ version: opts.version ?? '2.0.0', maxBytes: opts.maxBytes, now: opts.now, maxOrderedRobots: opts.maxOrderedRobots, log: { warn: (fields, msg) => lines.push({ fields, msg }) } });
  return { gate, lines };
}

const bytes = (v: unknown): Buffer => Buffer.from(JSON.stringify(v));
const state = (headerId: number, extra: Record<string, unknown> = {}, robot = A) => bytes({ ...VALID.state[0], headerId, serialNumber: robot.binding.serialNumber, ...extra });
const connection = (headerId: number, connectionState: string, robot = A) => bytes({ ...VALID.connection[0], headerId, connectionState, serialNumber: robot.binding.serialNumber });
const visualization = (headerId: number, robot = A) => bytes({ ...VALID.visualization[0], headerId, serialNumber: robot.binding.serialNumber });

function rejected(gate: InboundGate): Partial<Record<RejectReason, number>> {
  const out: Partial<Record<RejectReason, number>> = {};
  gate.stats().rejected.forEach((n, i) => { if (n > 0) out[REJECT_REASONS[i]!] = n; });
  return out;
}

describe('checks', () => {
  test('a valid message comes back parsed and typed by its topic', () => {
    const { gate, lines } = makeGate();
    const got = gate.accept(A, 'state', state(1));
    expect(got?.topic).toBe('state');
    if (got?.topic === 'state') expect(got.message.batteryState.batteryCharge).toBe(80);
    expect(gate.accept(A, 'connection', connection(1, 'ONLINE'))?.topic).toBe('connection');
    expect(gate.accept(A, 'visualization', visualization(1))?.topic).toBe('visualization');
    expect(gate.accept(A, 'factsheet', bytes({ ...VALID.factsheet[0], serialNumber: 'sn-1' }))?.topic).toBe('factsheet');
    expect(gate.stats()).toMatchObject({ accepted: 4, headerResets: 0 });
    expect(rejected(gate)).toEqual({});
    expect(lines).toEqual([]);
  });

  test('an oversized message is refused before it is decoded', () => {
    const { gate } = makeGate({ maxBytes: 1024 });
    const parse = vi.spyOn(JSON, 'parse');
    try {
      expect(gate.accept(A, 'state', state(1, { pad: 'x'.repeat(2000) }))).toBeUndefined();
      expect(parse).not.toHaveBeenCalled();
    } finally {
      parse.mockRestore();
    }
    expect(rejected(gate)).toEqual({ too_large: 1 });
    // At the bound exactly it is read.
    const exact = state(2);
    expect(makeGate({ maxBytes: exact.length }).gate.accept(A, 'state', exact)).toBeDefined();
  });

  test('each kind of bad input is counted under its reason', () => {
    const { gate } = makeGate();
    const cases: [string, Buffer, RejectReason][] = [
      ['order', state(1), 'unknown_topic'],
      ['state', Buffer.from('{"headerId":'), 'not_json'],
      ['state', Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), 'not_json'],
      ['state', Buffer.from(''), 'not_json'],
      ['state', state(1, { version: '1.1.0' }), 'wrong_version'],
      ['state', state(1, { version: '2.1.0' }), 'wrong_version'],
      ['state', state(1, { version: '20.0.0' }), 'wrong_version'],
      ['state', state(1, { manufacturer: 'Other' }), 'wrong_identity'],
      ['state', state(1, { serialNumber: 'sn-2' }), 'wrong_identity'],
      ['state', state(1, { batteryState: { charging: false } }), 'schema'],
      ['state', state(1, { operatingMode: 'AUTOPILOT' }), 'schema'],
      ['state', state(1, { headerId: '1' }), 'schema'],
      ['state', state(1, { version: 2 }), 'schema'],
      ['state', bytes([VALID.state[0]]), 'schema'],
      ['state', Buffer.from('null'), 'schema'],
    ];
    for (const [topic, payload, reason] of cases) expect(gate.accept(A, topic, payload), `${topic} ${reason}`).toBeUndefined();
    const want: Partial<Record<RejectReason, number>> = {};
    for (const [, , reason] of cases) want[reason] = (want[reason] ?? 0) + 1;
    expect(rejected(gate)).toEqual(want);
    expect(gate.stats().accepted).toBe(0);
  });

  test('the patch version is not checked; the minor is, against the configured one', () => {
    const { gate } = makeGate();
    expect(gate.accept(A, 'state', state(1, { version: '2.0.7' }))).toBeDefined();
    expect(gate.accept(A, 'state', state(2, { version: '2.0' }))).toBeDefined();
    const v21 = makeGate({ version: '2.1.0' }).gate;
    expect(v21.accept(A, 'state', state(1, { version: '2.1.0' }))).toBeDefined();
    expect(v21.accept(A, 'state', state(2, { version: '2.0.0' }))).toBeUndefined();
  });

  test('a version the schemas do not cover, or a bad byte bound, is refused at creation', () => {
    expect(() => makeGate({ version: '1.1.0' })).toThrow(/2\.x\.y/);
    expect(() => makeGate({ version: 'v2' })).toThrow(/2\.x\.y/);
    expect(() => makeGate({ maxBytes: 0 })).toThrow(/maxBytes/);
  });

  test('nothing a robot sends makes it throw', () => {
    const { gate } = makeGate({ maxBytes: 4096 });
    const rnd = prng(7);
    const topics = ['state', 'connection', 'visualization', 'factsheet', 'x'];
    const good = state(1);
    for (let i = 0; i < 3000; i++) {
      const n = Math.floor(rnd() * 600);
      let b: Buffer;
      if (i % 3 === 0) {
        // Valid JSON text with bytes flipped.
        b = Buffer.from(good);
        for (let k = 0; k < 1 + Math.floor(rnd() * 4); k++) b[Math.floor(rnd() * b.length)] = Math.floor(rnd() * 256);
      } else {
        b = Buffer.alloc(n);
        for (let k = 0; k < n; k++) b[k] = Math.floor(rnd() * 256);
      }
      expect(() => gate.accept(A, topics[i % topics.length]!, b)).not.toThrow();
    }
    const deep = Buffer.from(`${'['.repeat(4000)}${']'.repeat(4000)}`);
    expect(gate.accept(A, 'state', deep)).toBeUndefined();
    expect(gate.stats().rejected[REJECT_REASONS.indexOf('gate_error')]).toBe(0);
  });
});

describe('headerId order', () => {
  test('each robot and topic must go up; gaps are fine', () => {
    const { gate } = makeGate();
    expect(gate.accept(A, 'state', state(5))).toBeDefined();
    expect(gate.accept(A, 'state', state(9))).toBeDefined();
    expect(gate.accept(A, 'state', state(9))).toBeUndefined();
    expect(gate.accept(A, 'state', state(3))).toBeUndefined();
    // Another topic of the same robot, and another robot, have their own sequences.
    expect(gate.accept(A, 'visualization', visualization(1))).toBeDefined();
    expect(gate.accept(B, 'state', state(1, {}, B))).toBeDefined();
    expect(gate.accept(A, 'state', state(10))).toBeDefined();
    expect(rejected(gate)).toEqual({ out_of_order: 2 });
  });

  test('a restarted robot\'s reset headerIds are taken after its connection ONLINE, and counted', () => {
    const { gate } = makeGate();
    expect(gate.accept(A, 'connection', connection(1, 'ONLINE'))).toBeDefined();
    expect(gate.accept(A, 'state', state(40))).toBeDefined();
    expect(gate.accept(A, 'visualization', visualization(70))).toBeDefined();
    // The robot restarts: without ONLINE first, its state from 0 is refused...
    expect(gate.accept(A, 'state', state(0))).toBeUndefined();
    // ...its last will (composed at connect, the lower headerId) is not ordered...
    expect(gate.accept(A, 'connection', connection(0, 'CONNECTIONBROKEN'))).toBeDefined();
    // ...and after its ONLINE each topic starts again.
    expect(gate.accept(A, 'connection', connection(1, 'ONLINE'))).toBeDefined();
    expect(gate.accept(A, 'state', state(0))).toBeDefined();
    expect(gate.accept(A, 'state', state(0))).toBeUndefined();
    expect(gate.accept(A, 'state', state(1))).toBeDefined();
    expect(gate.accept(A, 'visualization', visualization(0))).toBeDefined();
    expect(gate.stats().headerResets).toBe(2);
    expect(rejected(gate)).toEqual({ out_of_order: 2 });
  });

  test('a 32-bit headerId that wraps to 0 is taken', () => {
    const { gate } = makeGate();
    expect(gate.accept(A, 'state', state(0xffffffff))).toBeDefined();
    expect(gate.accept(A, 'state', state(0))).toBeDefined();
    expect(gate.accept(A, 'state', state(1))).toBeDefined();
  });

  test('past its bound the robot remembered longest ago is forgotten; forget() drops a robot', () => {
    const { gate } = makeGate({ maxOrderedRobots: 2 });
    const C = { ...B, robotId: 'robot-c', binding: { manufacturer: 'Acme', serialNumber: 'sn-3' } };
    gate.accept(A, 'state', state(10));
    gate.accept(B, 'state', state(10, {}, B));
    gate.accept(C, 'state', state(10, {}, C));
    // A was forgotten: its lower headerId is taken as a session's first.
    expect(gate.accept(A, 'state', state(2))).toBeDefined();
    expect(gate.accept(C, 'state', state(9, {}, C))).toBeUndefined();
    gate.forget('robot-c');
    expect(gate.accept(C, 'state', state(9, {}, C))).toBeDefined();
  });
});

describe('log', () => {
  test('one line per robot per window, the count of the rest in the next; no payload value', () => {
    let now = 1_000_000;
    const { gate, lines } = makeGate({ now: () => now });
    for (let i = 0; i < 100; i++) gate.accept(A, 'state', state(1, { serialNumber: 'leaked-secret-value' }));
    for (let i = 0; i < 10; i++) gate.accept(B, 'state', Buffer.from('not json'));
    expect(lines.map((l) => [l.fields.robotId, l.fields.reason])).toEqual([['robot-a', 'wrong_identity'], ['robot-b', 'not_json']]);
    expect(rejected(gate)).toEqual({ wrong_identity: 100, not_json: 10 });
    now += 60_000;
    gate.accept(A, 'state', state(1, { operatingMode: 'leaked-secret-value' }));
    expect(lines).toHaveLength(3);
    expect(lines[2]!.fields).toMatchObject({ robotId: 'robot-a', topic: 'state', reason: 'schema', refusedSinceLastLine: 99, problem: 'operatingMode must be equal to one of the allowed values' });
    expect(JSON.stringify(lines)).not.toContain('leaked-secret-value');
  });

  test('when every remembered window is open, further robots share one window', () => {
    let now = 0;
    const lines: string[] = [];
    const log = new RejectionLog({ warn: (f) => lines.push(String(f.robotId)) }, 1000, () => now, 2);
    for (const id of ['a', 'b', 'c', 'd', 'a', 'c']) log.refused(id, 'state', 'schema', 'x');
    expect(lines).toEqual(['a', 'b', 'c']);
    // Once windows end, a robot gets its own again.
    now += 1000;
    log.refused('d', 'state', 'schema', 'x');
    expect(lines).toEqual(['a', 'b', 'c', 'd']);
  });
});
