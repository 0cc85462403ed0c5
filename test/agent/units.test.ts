import { fromBinary } from '@bufbuild/protobuf';
import { describe, expect, it } from 'vitest';
import { Backoff } from '../../src/agent/backoff.js';
import { CommandLedger } from '../../src/agent/command-ledger.js';
import { TelemetryQueue } from '../../src/agent/telemetry-queue.js';
import { CommandAck_Status } from '../../src/gen/fleetgw/v1/robot_link_pb.js';
import { TelemetryBatchSchema } from '../../src/gen/fleetgw/v1/telemetry_pb.js';

describe('TelemetryQueue', () => {
  it('frames queued samples as an encoded TelemetryBatch, oldest first, in bounded batches', () => {
    const q = new TelemetryQueue(10);
    for (let i = 0; i < 5; i++) q.push(Uint8Array.from([0x50, i + 1])); // TelemetrySample{gps_fix: i+1}
    const first = q.takeBatch(3);
    expect(first?.samples).toBe(3);
    const batch = fromBinary(TelemetryBatchSchema, first!.batch);
    expect(batch.samples.map((s) => s.gpsFix)).toEqual([1, 2, 3]);
    expect(q.length).toBe(2);
    expect(q.takeBatch(10)?.samples).toBe(2);
    expect(q.takeBatch(10)).toBeNull();
  });

  it('drops the oldest samples when full and counts them', () => {
    const q = new TelemetryQueue(3);
    for (let i = 0; i < 7; i++) q.push(Uint8Array.from([0x50, i + 1]));
    expect(q.dropped).toBe(4);
    const batch = fromBinary(TelemetryBatchSchema, q.takeBatch(10)!.batch);
    expect(batch.samples.map((s) => s.gpsFix)).toEqual([5, 6, 7]);
  });
});

describe('CommandLedger', () => {
  const ok = { status: CommandAck_Status.RECEIVED, reason: '' } as const;
  it('remembers decisions by id and tracks the highest applied seq', () => {
    const l = new CommandLedger(4, 0n);
    l.begin('a');
    expect(l.get('a')).toEqual({ state: 'pending' });
    l.decide('a', 1n, ok);
    l.decide('b', 2n, { status: CommandAck_Status.REJECTED, reason: 'no' });
    expect(l.get('a')).toEqual({ state: 'decided', decision: ok });
    expect(l.lastAppliedSeq).toBe(1n); // rejected seq 2 was not applied
    expect(l.isStale(2n)).toBe(true);
    expect(l.isStale(3n)).toBe(false);
    expect(l.isStale(0n)).toBe(false); // unsequenced
  });

  it('forgets the oldest ids beyond its capacity, while the seq mark still blocks them', () => {
    const l = new CommandLedger(2, 0n);
    l.decide('a', 1n, ok);
    l.decide('b', 2n, ok);
    l.decide('c', 3n, ok);
    expect(l.get('a')).toBeUndefined();
    expect(l.isStale(1n)).toBe(true);
  });

  it('starts from a restored last applied seq', () => {
    const l = new CommandLedger(8, 10n);
    expect(l.lastAppliedSeq).toBe(10n);
    expect(l.isStale(10n)).toBe(true);
  });
});

describe('Backoff', () => {
  it('doubles up to the cap with jitter between half and all of the base, and resets', () => {
    const lo = new Backoff(100, 1000, () => 0);
    expect([lo.next(), lo.next(), lo.next(), lo.next(), lo.next()]).toEqual([50, 100, 200, 400, 500]);
    const hi = new Backoff(100, 1000, () => 1);
    expect([hi.next(), hi.next(), hi.next(), hi.next(), hi.next()]).toEqual([100, 200, 400, 800, 1000]);
    hi.reset();
    expect(hi.next()).toBe(100);
  });
});
