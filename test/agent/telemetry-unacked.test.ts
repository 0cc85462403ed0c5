// The agent's buffer of sent, unacknowledged telemetry batches (issue 14 part 1): bounded, drop-oldest
// counted, forgotten on a receipt, rewound for a resend after a reconnect.
import { describe, expect, it } from 'vitest';
import { TelemetryQueue } from '../../src/agent/telemetry-queue.js';
import { UnackedBatches } from '../../src/agent/telemetry-unacked.js';

const b = (n: number): Buffer => Buffer.alloc(n, 1);

describe('UnackedBatches', () => {
  it('keeps written batches until acknowledged, resends the rest oldest first after a rewind', () => {
    const u = new UnackedBatches(10, 1_000);
    u.add(1, b(10), 1);
    u.add(2, b(20), 2);
    u.add(3, b(30), 3);
    expect(u.nextResend()).toBeNull(); // all written on this stream
    u.ackUpTo(1);
    expect([u.length, u.byteLength]).toEqual([2, 50]);
    u.rewind();
    expect(u.nextResend()?.length).toBe(20);
    expect(u.nextResend()?.length).toBe(30);
    expect(u.nextResend()).toBeNull();
    expect(u.resentBatches).toBe(2);
    u.ackUpTo(3);
    expect([u.length, u.byteLength]).toEqual([0, 0]);
  });

  it('drops the oldest batch when full (by count or bytes) and counts its samples', () => {
    const u = new UnackedBatches(2, 100);
    u.add(1, b(10), 5);
    u.add(2, b(10), 6);
    u.add(3, b(10), 7);
    expect(u.droppedSamples).toBe(5);
    u.add(4, b(95), 8);
    expect(u.droppedSamples).toBe(5 + 6 + 7);
    expect(u.length).toBe(1);
    u.rewind();
    expect(u.nextResend()?.length).toBe(95);
  });
});

describe('TelemetryQueue batches with seq and epoch', () => {
  it('writes seq and epoch before the samples', () => {
    const q = new TelemetryQueue(4);
    q.push(Uint8Array.of(0x08, 0x01));
    const out = q.takeBatch(10, 300, 5)!;
    expect([...out.batch]).toEqual([0x10, 0xac, 0x02, 0x18, 0x05, 0x0a, 0x02, 0x08, 0x01]);
  });
});
