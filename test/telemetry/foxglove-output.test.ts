/**
 * The Foxglove frames a decode worker writes (foxglove-output.ts): framing, which kinds, unknown
 * values, and that every payload validates against its channel's schema, which Foxglove can read.
 */
import { describe, expect, it } from 'vitest';
import { decodeTask } from '../../src/telemetry/decode/decode-worker.js';
import { FOXGLOVE_KINDS, foxgloveSchemaText } from '../../src/telemetry/sample/foxglove-channels.js';
import { FOXGLOVE_FRAME_HEADER_BYTES } from '../../src/telemetry/decode/foxglove-output.js';
import { FramePacker } from '../../src/telemetry/decode/frame-packer.js';
import type { FoxgloveBatch } from '../../src/telemetry/decode/worker-protocol.js';
import { schemaErrors } from '../support/foxglove-client.js';
import { foxgloveSchemaProblems } from '../support/foxglove-schema-subset.js';
import { encodeSamples, sample } from './helpers.js';

const ALL = 1 | 2 | 4;
const channelOf = (k: number) => ({ id: k, topic: '', encoding: 'json', schemaName: FOXGLOVE_KINDS[k]!.schemaName, schema: foxgloveSchemaText(FOXGLOVE_KINDS[k]!.kind) });

function frames(batch: FoxgloveBatch): { robot: string; kind: string; opcode: number; sub: number; ns: bigint; payload: Record<string, unknown> }[] {
  const out = [];
  for (let i = 0; i < batch.index.length; i += 4) {
    const f = batch.data.subarray(batch.index[i + 2], batch.index[i + 3]);
    const view = new DataView(f.buffer, f.byteOffset, f.byteLength);
    out.push({
      robot: batch.robotIds[batch.index[i]!]!, kind: FOXGLOVE_KINDS[batch.index[i + 1]!]!.kind, opcode: f[0]!, sub: view.getUint32(1, true), ns: view.getBigUint64(5, true),
      payload: JSON.parse(new TextDecoder().decode(f.subarray(FOXGLOVE_FRAME_HEADER_BYTES))) as Record<string, unknown>,
    });
  }
  return out;
}

describe('Foxglove frames from the decode worker', () => {
  it('writes the subscribed kinds of the masked robots only, framed with the sample time in ns', () => {
    const packer = new FramePacker();
    const t0 = 1_767_225_600_123;
    packer.add('r1', 'f', encodeSamples([sample(t0, 1), sample(t0 + 10, 2)]), 1);
    packer.add('r2', 'f', encodeSamples([sample(t0, 3)]), 1);
    packer.add('r3', 'f', encodeSamples([sample(t0, 4)]), 1);
    const task = packer.take();
    // r1: everything; r2: status only; r3: none.
    const out = decodeTask({ live: null, ...task, foxglove: Uint8Array.from(task.robotIds.map((id) => (id === 'r1' ? ALL : id === 'r2' ? 4 : 0))) });
    expect(out.rowCount).toBe(4);
    const fs = frames(out.foxglove!);
    expect(fs.map((f) => `${f.robot}:${f.kind}`)).toEqual(['r1:location', 'r1:pose', 'r1:status', 'r1:location', 'r1:pose', 'r1:status', 'r2:status']);
    for (const f of fs) {
      expect(f.opcode).toBe(1);
      expect(f.sub).toBe(0);
      const k = FOXGLOVE_KINDS.findIndex((x) => x.kind === f.kind);
      expect(schemaErrors(channelOf(k), f.payload), JSON.stringify(f.payload)).toEqual([]);
      const ts = f.payload.timestamp as { sec: number; nsec: number };
      expect(f.ns).toBe(BigInt(ts.sec) * 1_000_000_000n + BigInt(ts.nsec));
    }
    expect(fs[3]!.ns).toBe(BigInt(t0 + 10) * 1_000_000n);
    expect(fs[0]!.payload.timestamp).toEqual({ sec: 1_767_225_600, nsec: 123_000_000 });
  });

  it('leaves unknown values out of the status and skips a location or pose that is not finite', () => {
    const packer = new FramePacker();
    const s = sample(1_000, 0, { runId: '' });
    s.position!.latitude = Number.NaN;
    s.battery!.percent = Number.NaN;
    s.pose!.xM = Number.POSITIVE_INFINITY;
    packer.add('r1', 'f', encodeSamples([s]), 1);
    const out = decodeTask({ live: null, ...packer.take(), foxglove: Uint8Array.of(ALL) });
    const fs = frames(out.foxglove!);
    expect(fs.map((f) => f.kind)).toEqual(['status']);
    const status = fs[0]!.payload;
    expect(status.mission).toBeUndefined();
    expect(status.battery).toEqual({ charging: true, voltage_v: 48.5 });
    expect(schemaErrors(channelOf(2), status)).toEqual([]);
  });

  it('produces nothing without a mask, or with an all-zero one', () => {
    const packer = new FramePacker();
    packer.add('r1', 'f', encodeSamples([sample(1_000, 0)]), 1);
    const task = packer.take();
    expect(decodeTask({ live: null, ...task, frames: (task.frames as ArrayBuffer).slice(0) }).foxglove).toBeUndefined();
    expect(decodeTask({ live: null, ...task, foxglove: Uint8Array.of(0) }).foxglove).toBeNull();
  });

  it('every channel schema is one Foxglove can read (its JSON Schema subset)', () => {
    for (const k of FOXGLOVE_KINDS) expect(foxgloveSchemaProblems(JSON.parse(foxgloveSchemaText(k.kind)) as Record<string, unknown>), k.kind).toEqual([]);
    // The checker does refuse what Foxglove refuses.
    expect(foxgloveSchemaProblems({ type: 'object', properties: { a: { type: ['number', 'null'] } } })).toHaveLength(1);
  });
});
