import { describe, expect, it } from 'vitest';
import { decodeTask } from '../../src/telemetry/decode-worker.js';
import { FramePacker } from '../../src/telemetry/frame-packer.js';
import type { DecodeTask, RowFormat } from '../../src/telemetry/worker-protocol.js';
import { CORRUPT_FRAME, encodeBatch, encodeSamples, sample } from './helpers.js';

function task(packer: FramePacker, format: RowFormat, live: Uint8Array | null = null): DecodeTask {
  return { format, live, ...packer.take() };
}

describe('decode worker', () => {
  it('copies frames out of a larger buffer: mutating the source after push changes nothing', () => {
    const packer = new FramePacker(64);
    const big = new Uint8Array(1000);
    const frame = encodeBatch(1_700_000_000_000, 2);
    big.set(frame, 100);
    packer.add('r1', 'f1', big.subarray(100, 100 + frame.length), 5);
    big.fill(0xff);
    const out = decodeTask(task(packer, 'tsv'));
    expect(out.rowCount).toBe(2);
    expect(out.corruptFrames).toBe(0);
  });

  it('skips and counts a corrupt frame, keeps the others, keeps the newest snapshot per robot', () => {
    const packer = new FramePacker();
    packer.add('r1', 'f1', encodeBatch(1_000, 3), 1);
    packer.add('r2', 'f1', CORRUPT_FRAME, 2);
    packer.add('r1', 'f1', encodeSamples([sample(500, 9)]), 3); // older sample arrives later
    packer.add('r2', 'f1', encodeBatch(2_000, 1), 4);
    const out = decodeTask(task(packer, 'rowbinary'));
    expect(out.corruptFrames).toBe(1);
    expect(out.errors[0]?.code).toBe('corrupt_frame');
    expect(out.rowCount).toBe(5);
    const byRobot = Object.fromEntries(out.snapshots.map((s) => [s.robotId, s]));
    expect(byRobot.r1?.tsMs).toBe(1_020);
    expect(byRobot.r2?.tsMs).toBe(2_000);
    expect(byRobot.r2?.receivedAtMs).toBe(4);
    expect(byRobot.r1?.health.level).toBe('warn');
    expect(byRobot.r1?.mission?.runId).toBe('run-2');
  });

  it('produces live JSON only for the robots flagged live, one parseable message per sample', () => {
    const packer = new FramePacker();
    packer.add('r1', 'f1', encodeBatch(1_000, 2), 1);
    packer.add('r2', 'f2', encodeBatch(3_000, 3), 1);
    const t = task(packer, 'tsv', Uint8Array.from([0, 1]));
    const out = decodeTask(t);
    expect(out.live).not.toBeNull();
    const live = out.live!;
    const msgs: Record<string, unknown>[] = [];
    for (let i = 0; i < live.index.length; i += 3) {
      msgs.push(JSON.parse(Buffer.from(live.data.subarray(live.index[i + 1], live.index[i + 2])).toString()) as Record<string, unknown>);
    }
    expect(msgs.map((m) => [m.robot_id, m.ts_ms])).toEqual([
      ['r2', 3_000],
      ['r2', 3_010],
      ['r2', 3_020],
    ]);
    expect(msgs[0]).toMatchObject({ op: 'sample', fleet_id: 'f2', gps_fix: 4, health: { level: 'warn', faults: ['motor_overtemp'] } });
  });

  it('writes TSV rows with one line per sample', () => {
    const packer = new FramePacker();
    packer.add('r\t1', 'f1', encodeBatch(1_000, 4), 1);
    const out = decodeTask(task(packer, 'tsv'));
    const lines = Buffer.from(out.rows).toString().split('\n');
    expect(lines).toHaveLength(5); // 4 rows + trailing newline
    expect(lines[0]!.startsWith('r\\t1\tf1\t1000\t')).toBe(true);
  });
});
