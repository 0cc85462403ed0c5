import { describe, expect, it } from 'vitest';
import { decodeTask } from '../../src/telemetry/decode/decode-worker.js';
import { FramePacker } from '../../src/telemetry/decode/frame-packer.js';
import { readRowValues } from '../../src/telemetry/sample/row-rowbinary.js';
import { decodeSnapshot, snapshotValue } from '../../src/telemetry/sample/snapshot-codec.js';
import type { TelemetrySnapshot } from '../../src/telemetry/sample/snapshot.js';
import type { DecodeResult, DecodeTask } from '../../src/telemetry/decode/worker-protocol.js';
import { CORRUPT_FRAME, encodeBatch, encodeSamples, sample } from './helpers.js';

function task(packer: FramePacker, live: Uint8Array | null = null): DecodeTask {
  return { live, ...packer.take() };
}

/** Each robot's snapshot as the LMDB value the ingest stores for it, read back. */
function snapshotsOf(out: DecodeResult): TelemetrySnapshot[] {
  const snaps: TelemetrySnapshot[] = [];
  for (let i = 0; i < out.snapshots.length; i += 3) {
    snaps.push(decodeSnapshot(snapshotValue(out.rows.subarray(out.snapshots[i + 1], out.snapshots[i + 2])))!);
  }
  return snaps;
}

/** Every row of a result, as values by column. */
function rowsOf(out: DecodeResult): Record<string, unknown>[] {
  // Each snapshot marks one row's extent; walk all rows by re-reading from the start with lengths.
  const rows: Record<string, unknown>[] = [];
  let pos = 0;
  while (pos < out.rows.length) {
    // Try growing ends until a row parses exactly (rows are small; fine for a test).
    let end = pos + 1;
    for (; end <= out.rows.length; end++) {
      try {
        rows.push(readRowValues(out.rows.subarray(pos, end)));
        break;
      } catch {
        // not a whole row yet
      }
    }
    pos = end;
  }
  return rows;
}

describe('decode worker', () => {
  it('copies frames out of a larger buffer: mutating the source after push changes nothing', () => {
    const packer = new FramePacker(64);
    const big = new Uint8Array(1000);
    const frame = encodeBatch(1_700_000_000_000, 2);
    big.set(frame, 100);
    packer.add('r1', 'f1', big.subarray(100, 100 + frame.length), 5);
    big.fill(0xff);
    const out = decodeTask(task(packer));
    expect(out.rowCount).toBe(2);
    expect(out.corruptFrames).toBe(0);
  });

  it('skips and counts a corrupt frame, keeps the others, keeps the newest snapshot per robot', () => {
    const packer = new FramePacker();
    packer.add('r1', 'f1', encodeBatch(1_000, 3), 1);
    packer.add('r2', 'f1', CORRUPT_FRAME, 2);
    packer.add('r1', 'f1', encodeSamples([sample(500, 9)]), 3); // older sample arrives later
    packer.add('r2', 'f1', encodeBatch(2_000, 1), 4);
    const out = decodeTask(task(packer));
    expect(out.corruptFrames).toBe(1);
    expect(out.errors[0]?.code).toBe('corrupt_frame');
    expect(out.rowCount).toBe(5);
    const byRobot = Object.fromEntries(snapshotsOf(out).map((s) => [s.robotId, s]));
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
    const t = task(packer, Uint8Array.from([0, 1]));
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

  it('writes one RowBinary row per sample', () => {
    const packer = new FramePacker();
    packer.add('r\t1', 'f1', encodeBatch(1_000, 4), 1);
    const out = decodeTask(task(packer));
    const rows = rowsOf(out);
    expect(rows).toHaveLength(4);
    expect(rows[0]).toMatchObject({ robot_id: 'r\t1', fleet_id: 'f1', ts_ms: 1000n, received_at_ms: 1n, mode: 'autonomous' });
    expect(rows.map((r) => r.ts_ms)).toEqual([1000n, 1010n, 1020n, 1030n]);
  });
});
