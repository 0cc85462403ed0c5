/** restore-seq.ts: a restored store never hands out a command seq a robot may have applied after the backup. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { seqMetaKey } from '../../src/commands/keys.js';
import { RESTORE_SEQ_SKIP, skipSeqsAfterRestore } from '../../src/commands/restore-seq.js';
import { addRobot, createFleet, createOrg } from '../../src/store/identity.js';
import { openStore } from '../../src/store/lmdb.js';

const dir = mkdtempSync(join(tmpdir(), 'fleetgw-restore-seq-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('skipSeqsAfterRestore', () => {
  it('moves every robot 2^32 past its reservation, robots without one included', async () => {
    const store = openStore(dir);
    try {
      const fleet = createFleet(store, createOrg(store, 'Acme').orgId, 'Yard');
      const a = addRobot(store, { fleetId: fleet.fleetId, name: 'a', capabilities: [], active: true }).record.robotId;
      const b = addRobot(store, { fleetId: fleet.fleetId, name: 'b', capabilities: [], active: true }).record.robotId;
      await store.meta.put(seqMetaKey(a), 2048);
      expect(await skipSeqsAfterRestore(store)).toBe(2);
      expect(store.meta.get(seqMetaKey(a))).toBe(2048 + RESTORE_SEQ_SKIP);
      expect(store.meta.get(seqMetaKey(b))).toBe(RESTORE_SEQ_SKIP);
      expect(Number.isSafeInteger((store.meta.get(seqMetaKey(a)) as number) * 1000)).toBe(true);
    } finally {
      await store.close();
    }
  });
});
