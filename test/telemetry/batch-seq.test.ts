/**
 * The batch's seq and epoch are read wherever they stand in its bytes (batch-seq.ts), as protobuf-es
 * reads them from every batch a strict parser accepts: on fuzzed batches the two agree wherever each
 * sample also decodes on its own from exactly its declared length (protobuf-es alone reads a sample
 * whose last field runs past that length; C++, Python and Go reject it).
 */
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { BinaryReader, WireType } from '@bufbuild/protobuf/wire';
import { describe, expect, it } from 'vitest';
import { TelemetryBatchSchema, TelemetrySampleSchema } from '../../src/gen/fleetgw/v1/telemetry_pb.js';
import { BatchSeqReader } from '../../src/telemetry/ingest/batch-seq.js';
import { prng } from '../support/prng.js';
import { sample } from './helpers.js';

const r = new BatchSeqReader();
/** Each sample decodes from exactly its declared bytes (what a strict parser requires). */
function samplesStrict(bytes: Uint8Array): boolean {
  try {
    const rd = new BinaryReader(bytes);
    while (rd.pos < rd.len) {
      const [field, wt] = rd.tag();
      if (field === 1 && wt === WireType.LengthDelimited) fromBinary(TelemetrySampleSchema, rd.bytes());
      else rd.skip(wt, field);
    }
    return true;
  } catch {
    return false;
  }
}
const cat = (...parts: (Uint8Array | number[])[]): Uint8Array => Uint8Array.from(parts.flatMap((p) => [...p]));

describe('batch seq reader', () => {
  it('reads seq and epoch before, between and after the samples', () => {
    const samples = [sample(1_000, 0), sample(1_001, 1)];
    // protobuf-es writes in field-number order: samples (1) first, as Python, C++, Go and Rust do.
    const standard = toBinary(TelemetryBatchSchema, create(TelemetryBatchSchema, { samples, seq: 7n, epoch: 99n }));
    expect(standard[0]).toBe(0x0a);
    expect(r.read(standard)).toBe(true);
    expect([r.seq, r.epoch]).toEqual([7, 99]);
    const one = toBinary(TelemetryBatchSchema, create(TelemetryBatchSchema, { samples: [samples[0]!] }));
    expect(r.read(cat([0x10, 0x05], one, [0x18, 0xe4, 0x00], one))).toBe(true);
    expect([r.seq, r.epoch]).toEqual([5, 100]);
    expect(r.read(cat([0x10, 0x05, 0x18, 0xe4, 0x00, 0x0a, 0x00]))).toBe(true);
    expect([r.seq, r.epoch]).toEqual([5, 100]);
    expect(r.read(cat([0x10, 0x05]))).toBe(true); // no epoch: 0
    expect([r.seq, r.epoch]).toEqual([5, 0]);
    expect(r.read(cat([0x10, 0x05, 0x10, 0x09]))).toBe(true); // repeated: the last wins
    expect(r.seq).toBe(9);
  });

  it('skips unknown fields of every skippable wire type, groups included', () => {
    const unknown = [0x20, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, // 4: an 11-byte varint
      0x29, 1, 2, 3, 4, 5, 6, 7, 8, // 5: fixed64
      0x35, 1, 2, 3, 4, // 6: fixed32
      0x3a, 0x02, 0x10, 0x63, // 7: bytes holding what looks like a seq
      0x43, 0x08, 0x01, 0x4b, 0x4c, 0x44]; // 8: a group holding a group
    expect(r.read(cat(unknown, [0x10, 0x03, 0x18, 0x04]))).toBe(true);
    expect([r.seq, r.epoch]).toEqual([3, 4]);
    expect(fromBinary(TelemetryBatchSchema, cat(unknown, [0x10, 0x03])).seq).toBe(3n);
  });

  it('keeps a 10-byte varint\'s low 64 bits, as protobuf-es does', () => {
    // seq = 2^64 + 7, epoch = 2^65 + 3: ten bytes each, the last one carrying bits past 64.
    const bytes = cat([0x10, 0x87, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02], [0x18, 0x83, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x04]);
    const es = fromBinary(TelemetryBatchSchema, bytes);
    expect([es.seq, es.epoch]).toEqual([7n, 3n]);
    expect(r.read(bytes)).toBe(true);
    expect([r.seq, r.epoch]).toEqual([7, 3]);
    // Bit 63 set: above 2^53, unsequenced.
    expect(r.read(cat([0x10, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01]))).toBe(false);
  });

  it('calls unsequenced what has no seq, a seq of 0, or is malformed at its top level', () => {
    const one = toBinary(TelemetryBatchSchema, create(TelemetryBatchSchema, { samples: [sample(1_000, 0)] }));
    for (const bytes of [
      new Uint8Array(0),
      one, // no seq (older agents)
      cat(one, [0x10, 0x00]), // seq 0
      cat(one, [0x10, 0xff]), // truncated varint
      cat([0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]), // above 2^53
      cat([0x10, 0x01, 0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]), // epoch above 2^53
      cat([0x10, 0x01, 0x0a, 0x05, 0x00]), // a sample past the end
      cat([0x10, 0x01, 0x00]), // field 0
      cat([0x10, 0x01, 0x24]), // end group without a start
      cat([0x10, 0x01, 0x26]), // wire type 6
      cat([0x10, 0x01, 0x43, 0x4c]), // a group closed by another field number
      cat([0x10, 0x01, 0x29, 0x00]), // fixed64 past the end
      cat([0x10, 0x01, 0x80, 0x80, 0x80, 0x80, 0x10]), // tag over 32 bits
    ]) {
      expect(r.read(bytes), Buffer.from(bytes).toString('hex')).toBe(false);
      expect([r.seq, r.epoch]).toEqual([0, 0]);
    }
  });

  it('agrees with protobuf-es on fuzzed batches', () => {
    const rand = prng(20261207);
    const base = toBinary(TelemetryBatchSchema, create(TelemetryBatchSchema, {
      samples: [sample(1_000, 0, { faults: ['a'] }), sample(1_001, 1)], seq: 300n, epoch: 70_000n,
    }));
    let sequenced = 0;
    for (let i = 0; i < 5_000; i++) {
      const b = Uint8Array.from(base);
      for (let m = 1 + Math.floor(rand() * 3); m > 0; m--) b[Math.floor(rand() * b.length)] = Math.floor(rand() * 256);
      const cut = rand() < 0.2 ? b.subarray(0, Math.floor(rand() * b.length)) : b;
      let ref: { seq: bigint; epoch: bigint } | null = null;
      try {
        ref = fromBinary(TelemetryBatchSchema, cut);
      } catch {
        ref = null;
      }
      const got = r.read(cut);
      const hex = Buffer.from(cut).toString('hex');
      if (got) {
        sequenced++;
        if (ref !== null && samplesStrict(cut)) expect([BigInt(r.seq), BigInt(r.epoch)], hex).toEqual([ref.seq, ref.epoch]);
      } else if (ref !== null && samplesStrict(cut) && ref.seq > 0n && ref.seq <= BigInt(Number.MAX_SAFE_INTEGER) && ref.epoch <= BigInt(Number.MAX_SAFE_INTEGER)) {
        expect.fail(`protobuf-es reads seq ${ref.seq} from ${hex}, the reader none`);
      }
    }
    expect(sequenced).toBeGreaterThan(100);
  });
});
