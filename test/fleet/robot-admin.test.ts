/**
 * The transfer rules of `patchRobot` without sockets: a real LMDB store and event log, a command
 * service double that records holds and refuses while held (as src/commands/service.ts does).
 * Idle checks (before and under the hold), the hold spanning the transaction, the lone-roster
 * refusal, index and events in one commit, the old session closed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AuthContext } from '../../src/auth/context.js';
import { EventLog } from '../../src/events/log.js';
import { patchRobot, type RobotAdminDeps } from '../../src/fleet/robots/admin/patch-robot.js';
import { createFeature } from '../../src/missions/catalog/features.js';
import { NOTHING_ADVERTISED } from '../../src/missions/catalog/robot-capabilities.js';
import { createTemplate } from '../../src/missions/catalog/templates.js';
import { addRobot, createFleet, createOrg, listRobots } from '../../src/store/identity.js';
import { openStore, type Store } from '../../src/store/lmdb.js';
import { catalogWrites } from '../../src/missions/catalog/catalog-writes.js';
import { registryWrites } from '../../src/store/registry-writes.js';

const GEOMETRY = { type: 'Polygon' as const, coordinates: [[[5, 52], [5.001, 52], [5.001, 52.001], [5, 52]]] };

describe('patchRobot transfer', () => {
  let dir: string;
  let store: Store;
  let events: EventLog;
  let a: string;
  let b: string;
  let r0: string;
  let r1: string;
  let auth: AuthContext;
  const holds: string[] = [];
  const held = new Set<string>();
  let undelivered = 0;
  let activeRun: { runId: string } | undefined;
  const closed: string[] = [];
  const deps = (): RobotAdminDeps => ({
    store,
    registry: registryWrites(store),
    catalog: catalogWrites(store),
    events,
    commands: {
      hold: (id) => {
        holds.push(id);
        held.add(id);
        return () => held.delete(id);
      },
      undeliveredCount: () => undelivered,
    },
    runs: { activeRunOf: () => activeRun as never },
    link: { closeSession: (id) => (closed.push(id), true) },
  });

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'fleetgw-robot-admin-'));
    store = openStore(dir);
    events = new EventLog(store);
    const org = createOrg(store, 'Acme');
    a = createFleet(store, org.orgId, 'A').fleetId;
    b = createFleet(store, org.orgId, 'B').fleetId;
    r0 = addRobot(store, { fleetId: a, name: 'r0', capabilities: [], active: true }).record.robotId;
    r1 = addRobot(store, { fleetId: a, name: 'r1', capabilities: [], active: true }).record.robotId;
    auth = { actorType: 'api_key', apiKeyId: 'k1', orgId: org.orgId, fleetId: null, permissions: ['robots:write'] };
    holds.length = 0;
    held.clear();
    closed.length = 0;
    undelivered = 0;
    activeRun = undefined;
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const template = async (roster: string[]) => {
    const fleet = store.fleets.get(a)!;
    const f = await createFeature(store, events, fleet, { name: 'yard', geometry: GEOMETRY }, 1);
    return (await createTemplate(store, events, NOTHING_ADVERTISED, fleet, { name: 't', featureId: f.featureId, roster, steps: [{ kind: 'wait', config: {} }] }, 1)).template.missionId;
  };

  it('moves the record, the index and the rosters in one commit, holds commands meanwhile, closes the old session', async () => {
    const missionId = await template([r0, r1]);
    let heldDuringTxn = false;
    const d = deps();
    const inner = d.commands.undeliveredCount;
    d.commands.undeliveredCount = (id) => {
      heldDuringTxn ||= held.has(id);
      return inner(id);
    };
    const out = await patchRobot(d, auth, store.robots.get(r1)!, { fleet: store.fleets.get(b)!, notes: 'moved' }, 5);
    expect(heldDuringTxn).toBe(true);
    expect(held.size).toBe(0);
    expect(out).toMatchObject({ movedFrom: a, rostersLeft: [missionId] });
    expect(store.robots.get(r1)).toMatchObject({ fleetId: b, notes: 'moved', updatedAtMs: 5 });
    expect(listRobots(store, a).map((r) => r.robotId)).toEqual([r0]);
    expect(listRobots(store, b).map((r) => r.robotId)).toEqual([r1]);
    expect(store.templates.get(missionId)!.roster).toEqual([r0]);
    expect(closed).toEqual([r1]);
    await store.root.committed;
    expect(events.readTimeline(a, r1).map((e) => e.kind)).toEqual(['robot.updated', 'robot.transferred_out']);
    expect(events.readTimeline(b, r1).map((e) => e.kind)).toEqual(['robot.transferred_in']);
  });

  it('not idle: a run, or an unacknowledged command, even one that appears under the hold', async () => {
    activeRun = { runId: 'run-1' };
    await expect(patchRobot(deps(), auth, store.robots.get(r1)!, { fleet: store.fleets.get(b)! }, 5)).rejects.toMatchObject({ status: 409, message: expect.stringContaining('run-1') });
    expect(holds).toEqual([]);
    activeRun = undefined;
    // Idle at the first check; a command shows up by the time the transaction runs.
    const d = deps();
    let calls = 0;
    d.commands.undeliveredCount = () => (++calls > 1 ? 1 : 0);
    await expect(patchRobot(d, auth, store.robots.get(r1)!, { fleet: store.fleets.get(b)! }, 5)).rejects.toMatchObject({ status: 409 });
    expect(held.size).toBe(0);
    expect(store.robots.get(r1)!.fleetId).toBe(a);
    expect(closed).toEqual([]);
  });

  it('the only robot on a roster is not moved (the roster would become open)', async () => {
    const missionId = await template([r1]);
    await expect(patchRobot(deps(), auth, store.robots.get(r1)!, { fleet: store.fleets.get(b)! }, 5)).rejects.toMatchObject({ status: 409, message: expect.stringContaining(missionId) });
    expect(store.robots.get(r1)!.fleetId).toBe(a);
    expect(store.templates.get(missionId)!.roster).toEqual([r1]);
  });

  it('metadata only: no hold, no session change', async () => {
    await patchRobot(deps(), auth, store.robots.get(r0)!, { name: 'Mower', labels: { zone: 'n' }, active: false }, 7);
    expect(store.robots.get(r0)).toMatchObject({ name: 'Mower', labels: { zone: 'n' }, active: false, fleetId: a });
    expect(holds).toEqual([]);
    expect(closed).toEqual([]);
  });
});
