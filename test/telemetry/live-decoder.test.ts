/** The main thread's live decode writes the same bytes as the worker decoders, frame after frame. */
import { describe, expect, it } from 'vitest';
import { decoderOf, type DecoderKind } from '../../src/telemetry/decode/select.js';
import { loadNative } from '../../src/telemetry/decode/native.js';
import { LiveDecoder } from '../../src/telemetry/decode/live-decoder.js';
import { FRAME_HEADER_BYTES, type DecodeTask } from '../../src/telemetry/decode/worker-protocol.js';
import { CORRUPT_FRAME, encodeBatch, encodeSamples, sample } from './helpers.js';

/** A one-frame worker task for `bytes`. */
function task(robotId: string, fleetId: string, bytes: Uint8Array, receivedAtMs: number): DecodeTask {
  const frames = new ArrayBuffer(FRAME_HEADER_BYTES + bytes.length);
  const v = new DataView(frames);
  v.setUint32(0, 0, true);
  v.setUint32(4, bytes.length, true);
  v.setFloat64(8, receivedAtMs, true);
  new Uint8Array(frames, FRAME_HEADER_BYTES).set(bytes);
  return { frames, slot: -1, byteLength: frames.byteLength, frameCount: 1, robotIds: [robotId], fleetIds: [fleetId], live: Uint8Array.of(1) };
}

const kinds: DecoderKind[] = loadNative().binding ? ['js', 'native'] : ['js'];

describe('LiveDecoder', () => {
  it.each(kinds)('matches the %s worker decoder byte for byte (JSON, rows, clocks), reusing its buffers', (kind) => {
    const worker = decoderOf(kind);
    const live = new LiveDecoder();
    const frames: [string, string, Uint8Array][] = [
      ['r1', 'f1', encodeBatch(1_767_225_600_000, 3)],
      ['r2', 'f1', encodeSamples([sample(1_767_225_600_005, 7, { faults: [], runId: '' })])],
      ['r1', 'f1', encodeBatch(1_767_225_600_100, 1, 9)],
      ['r1', 'f2', encodeBatch(1_767_225_600_200, 2, 4)], // the robot moved to another fleet
    ];
    for (const [robotId, fleetId, bytes] of frames) {
      const got = live.decode(robotId, fleetId, bytes, 1_767_225_600_999)!;
      const want = worker.decode(task(robotId, fleetId, bytes, 1_767_225_600_999), 0);
      expect(Buffer.from(got.data).equals(Buffer.from(want.live!.data))).toBe(true);
      expect([...got.index]).toEqual([...want.live!.index]);
      expect(Buffer.from(got.rows!).equals(Buffer.from(want.rows))).toBe(true);
      expect(got.rowSpans!.length / 2).toBe(want.rowCount);
      expect(got.rowSpans![got.rowSpans!.length - 1]).toBe(want.rows.length);
      expect(got.fleetIds).toEqual([fleetId]);
      expect(got.ts![got.ts!.length - 1]).toBe(want.snapshotTs[0]);
    }
  });

  it('skips a frame that does not decode, then decodes the next one', () => {
    const live = new LiveDecoder();
    expect(live.decode('r1', 'f1', CORRUPT_FRAME, 1)).toBeNull();
    expect(live.decode('r1', 'f1', encodeBatch(1_767_225_600_000, 2), 2)!.index.length).toBe(6);
  });
});
