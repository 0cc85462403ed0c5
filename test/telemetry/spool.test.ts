/**
 * The disk spool's files (issue 14 part 1): blocks survive a restart with their durable points, a
 * block whose write a crash cut short is removed (it was never acknowledged), the bound is honoured,
 * and the batch header reader and ack tracker keep their rules.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AckTracker } from '../../src/telemetry/store/ack-tracker.js';
import { TelemetrySpool } from '../../src/telemetry/store/spool.js';
import { tempDir } from './helpers.js';

describe('telemetry spool files', () => {
  const tmp = tempDir('spool');
  afterAll(() => tmp.remove());

  it('keeps complete blocks across a reopen, in write order, and removes torn ones', async () => {
    const dir = join(tmp.dir, 'a');
    const { spool } = await TelemetrySpool.open(dir, 1_000);
    const a = await spool.write([Uint8Array.of(1, 2), Uint8Array.of(3)], 3, 1, new Map([['r1', { epoch: 9, seq: 4 }]]));
    const b = await spool.write([Uint8Array.of(4, 5, 6, 7)], 4, 2, new Map([['ロボ', { epoch: 2 ** 47, seq: 2 ** 52 }]]));
    expect(spool.bytes).toBe(7);
    await spool.checkpoint(new Map([['r0', { epoch: 1, seq: 1 }]]));
    // A crash while writing a third block: rows without meta.
    writeFileSync(join(dir, '999999999999999-dead-000000000.rows'), 'x');
    const again = await TelemetrySpool.open(dir, 1_000);
    expect(again.recovery.blocks.map((x) => x.name)).toEqual([a.name, b.name]);
    expect(again.recovery.blocks[1]!.points.get('ロボ')).toEqual({ epoch: 2 ** 47, seq: 2 ** 52 });
    expect(again.recovery.blocks[0]).toMatchObject({ rows: 1, bytes: 3 });
    expect(again.recovery.checkpoint).toEqual(new Map([['r0', { epoch: 1, seq: 1 }]]));
    expect(again.recovery.removedPartial).toBe(1);
    expect(again.spool.bytes).toBe(7);
    expect([...(await again.spool.read(again.recovery.blocks[1]!))]).toEqual([4, 5, 6, 7]);
    await again.spool.remove(again.recovery.blocks[0]!);
    expect(again.spool.bytes).toBe(4);
    expect((await TelemetrySpool.open(dir, 1_000)).recovery.blocks).toHaveLength(1);
  });

  it('says whether a block fits under the bound (an empty spool takes any one block)', async () => {
    const { spool } = await TelemetrySpool.open(join(tmp.dir, 'b'), 10);
    expect(spool.hasRoom(50)).toBe(true);
    await spool.write([new Uint8Array(8)], 8, 1, new Map());
    expect(spool.hasRoom(2)).toBe(true);
    expect(spool.hasRoom(3)).toBe(false);
  });
});

describe('ack tracker', () => {
  it('drops resends, re-announces the durable point, restarts on a new epoch, only advances', () => {
    const t = new AckTracker();
    const seen: string[] = [];
    t.onDurable((id, e, s) => seen.push(`${id}:${e}:${s}`));
    expect(t.admit('r', 1, 1)).toBe(true);
    expect(t.admit('r', 1, 2)).toBe(true);
    expect(t.admit('r', 1, 2)).toBe(false);
    t.markDurable(new Map([['r', { epoch: 1, seq: 2 }]]));
    t.markDurable(new Map([['r', { epoch: 1, seq: 1 }]]));
    expect(seen).toEqual(['r:1:2']);
    expect(t.admit('r', 1, 1)).toBe(false);
    expect(seen).toEqual(['r:1:2', 'r:1:2']);
    expect(t.admit('r', 2, 1)).toBe(true);
    t.markDurable(new Map([['r', { epoch: 1, seq: 9 }]])); // an old epoch's block: ignored
    expect(t.durableOf('r')).toBeUndefined();
    expect(t.duplicateBatches).toBe(2);
  });
});
