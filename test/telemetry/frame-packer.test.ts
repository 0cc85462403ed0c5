/**
 * The frame packer's two ways in: add() (robot and fleet ids, looked up per frame) and addFor() (the
 * caller caches each robot's index in the batch being filled): same frames, same batch.
 */
import { describe, expect, it } from 'vitest';
import { FramePacker, type PackerRobot } from '../../src/telemetry/decode/frame-packer.js';
import { FRAME_HEADER_BYTES } from '../../src/telemetry/decode/worker-protocol.js';

/** (robot index, bytes) of every frame of a batch, read back from its buffer. */
function framesOf(buf: ArrayBuffer, byteLength: number): [number, number[]][] {
  const view = new DataView(buf);
  const out: [number, number[]][] = [];
  for (let pos = 0; pos < byteLength;) {
    const len = view.getUint32(pos + 4, true);
    out.push([view.getUint32(pos, true), [...new Uint8Array(buf, pos + FRAME_HEADER_BYTES, len)]]);
    pos += FRAME_HEADER_BYTES + len;
  }
  return out;
}

describe('FramePacker', () => {
  it('addFor() packs what add() packs, a fleet change gives the robot a new index, and a new batch starts over', () => {
    const viaAdd = new FramePacker(1024);
    const viaFor = new FramePacker(1024);
    const a: PackerRobot = { robotId: 'a', fleetId: 'f1', gen: -1, index: 0 };
    const b: PackerRobot = { robotId: 'b', fleetId: 'f1', gen: -1, index: 0 };
    const frames: [PackerRobot, string, number[]][] = [[a, 'f1', [1]], [b, 'f1', [2, 2]], [a, 'f1', [3]], [a, 'f2', [4]], [b, 'f1', [5]], [a, 'f2', [6]]];
    for (const [robot, fleet, bytes] of frames) {
      viaAdd.add(robot.robotId, fleet, Uint8Array.from(bytes), 1);
      if (robot.fleetId !== fleet) {
        robot.fleetId = fleet;
        robot.gen = -1;
      }
      viaFor.addFor(robot, Uint8Array.from(bytes), 1);
    }
    const x = viaAdd.take();
    const y = viaFor.take();
    expect(y.robotIds).toEqual(x.robotIds);
    expect(y.fleetIds).toEqual(x.fleetIds);
    expect(y.robotIds.map((id, i) => `${id}:${y.fleetIds[i]}`)).toEqual(['a:f1', 'b:f1', 'a:f2']);
    expect(framesOf(y.frames!, y.byteLength)).toEqual(framesOf(x.frames!, x.byteLength));

    // A fleet change back within one batch: add() finds the old index, addFor() takes a further one
    // (documented; each frame's row carries the fleet it was sent under either way).
    for (const fleet of ['f1', 'f2', 'f1']) {
      viaAdd.add('a', fleet, Uint8Array.from([9]), 1);
      if (a.fleetId !== fleet) {
        a.fleetId = fleet;
        a.gen = -1;
      }
      viaFor.addFor(a, Uint8Array.from([9]), 1);
    }
    const x2 = viaAdd.take();
    const y2 = viaFor.take();
    expect(x2.robotIds.map((id, i) => `${id}:${x2.fleetIds[i]}`)).toEqual(['a:f1', 'a:f2']);
    expect(y2.robotIds.map((id, i) => `${id}:${y2.fleetIds[i]}`)).toEqual(['a:f1', 'a:f2', 'a:f1']);
    expect(framesOf(y2.frames!, y2.byteLength).map(([ri]) => y2.fleetIds[ri])).toEqual(['f1', 'f2', 'f1']);

    // The next batch: cached indexes of the previous one are not used.
    expect(viaFor.generation).toBe(2);
    viaFor.addFor(b, Uint8Array.from([7]), 2);
    viaFor.addFor(a, Uint8Array.from([8]), 2);
    const z = viaFor.take();
    expect(z.robotIds).toEqual(['b', 'a']);
    expect(framesOf(z.frames!, z.byteLength)).toEqual([[0, [7]], [1, [8]]]);
  });

  it('reuses up to 40 MiB of returned frames buffers (a burst of batches waiting for the pool), drops the rest', () => {
    const MiB = 1024 * 1024;
    const packer = new FramePacker(MiB);
    const robot: PackerRobot = { robotId: 'r', fleetId: 'f', gen: -1, index: 0 };
    // 50 batches in private buffers (no slots), all waiting at once, then all returned.
    const burst: ArrayBuffer[] = [];
    for (let i = 0; i < 50; i++) {
      packer.addFor(robot, new Uint8Array(100), 1);
      burst.push(packer.take().frames!);
    }
    for (const b of burst) packer.recycle(b);
    const reused = new Set(burst);
    const next: ArrayBuffer[] = [];
    for (let i = 0; i < 50; i++) {
      packer.addFor(robot, new Uint8Array(100), 1);
      next.push(packer.take().frames!);
    }
    // The next batches come out of the kept buffers as long as they last: 40 of 1 MiB.
    const fromSpares = next.filter((b) => reused.has(b)).length;
    expect(fromSpares).toBe(40);
    // Returned again: the budget freed by the first round is there again (no byte count drifts).
    for (const b of next) packer.recycle(b);
    const again = new Set(next);
    let fromSparesAgain = 0;
    for (let i = 0; i < 50; i++) {
      packer.addFor(robot, new Uint8Array(100), 1);
      if (again.has(packer.take().frames!)) fromSparesAgain++;
    }
    expect(fromSparesAgain).toBe(40);
  });

  it('when full, keeps a returned full-size buffer in place of small ones (48 buffers at most)', () => {
    const KiB = 1024;
    const packer = new FramePacker(32 * KiB);
    const small = Array.from({ length: 48 }, () => new ArrayBuffer(32 * KiB));
    for (const b of small) packer.recycle(b);
    const big = new ArrayBuffer(1024 * KiB);
    packer.recycle(big);
    // A batch growing past 256 KiB asks for a buffer of its size: the big one is there.
    const robot: PackerRobot = { robotId: 'r', fleetId: 'f', gen: -1, index: 0 };
    for (let i = 0; i < 8; i++) packer.addFor(robot, new Uint8Array(100 * KiB), 1);
    packer.take();
    packer.addFor(robot, new Uint8Array(100), 1);
    expect(packer.take().frames).toBe(big);
  });
});
