// Mission templates through the real HTTP stack: idempotent create, read, edit with omitted step
// configuration preserved, delete refused while referenced, enable/disable, runtime sync.
import { describe, expect, it } from 'vitest';
import { req } from '../idempotency/harness.js';
import { catalogPerTest } from './catalog-support.js';

const setup = catalogPerTest();

describe('mission templates', () => {
  it('create requires Idempotency-Key, mints missionId, reports runtimeSync applied and replays', async () => {
    const c = await setup();
    const featureId = await c.feature();
    const body = { name: 'Mow north', featureId, capabilities: ['mow'], steps: [{ kind: 'cover_area', config: { spacingM: 0.5 } }] };
    const noKey = await req(c.s, 'POST', `${c.base}/mission-templates`, { body });
    expect(noKey).toMatchObject({ status: 400, json: { code: 'bad_request' } });
    const first = await req(c.s, 'POST', `${c.base}/mission-templates`, { body, idem: 'create-1' });
    expect(first.status).toBe(201);
    expect(first.json).toMatchObject({ success: true, persistenceState: 'committed', runtimeSync: 'applied', missionId: expect.any(String), operationId: expect.any(String) });
    expect(first.json.template).toMatchObject({ name: 'Mow north', featureId, enabled: true, capabilities: ['mow'], roster: [], priority: 0, version: 1 });
    expect(first.json.template.steps[0]).toMatchObject({ stepId: expect.any(String), kind: 'cover_area', config: { spacingM: 0.5 } });
    const again = await req(c.s, 'POST', `${c.base}/mission-templates`, { body, idem: 'create-1' });
    expect(again.json.missionId).toBe(first.json.missionId);
    expect((await req(c.s, 'GET', `${c.base}/mission-templates`)).json.items).toEqual([
      { missionId: first.json.missionId, name: 'Mow north', featureId, enabled: true, priority: 0 },
    ]);
    const read = await req(c.s, 'GET', `${c.base}/mission-templates/${first.json.missionId}`);
    expect(read.json).toEqual(first.json.template);
    expect(c.runtime().template(c.s.fleetId, first.json.missionId)?.name).toBe('Mow north');
  });

  it('rejects an unknown feature, a roster robot outside the fleet or missing a capability', async () => {
    const c = await setup();
    expect((await c.template({ featureId: '00000000-0000-4000-8000-000000000000' })).status).toBe(404);
    expect((await c.template({ roster: [c.s.robots.foreign] })).status).toBe(404);
    expect((await c.template({ roster: [c.s.robots.inactive] })).status).toBe(404);
    const missing = await c.template({ roster: [c.s.robots.active[2]] }); // r3 has no `mow`
    expect(missing).toMatchObject({ status: 400, json: { code: 'bad_request', error: expect.stringContaining('mow') } });
    expect((await c.template({ roster: [c.s.robots.active[0]] })).status).toBe(201);
  });

  it('edit preserves omitted fields and omitted step configuration', async () => {
    const c = await setup();
    const created = await c.template({
      steps: [
        { stepId: 'go', kind: 'drive_to', config: { lat: 50, lon: 10 } },
        { stepId: 'mow', kind: 'cover_area', config: { spacingM: 0.5 } },
      ],
      parameters: { bladeHeightMm: 40 },
      prerequisites: { minBatteryPct: 30 },
    });
    const id = created.json.missionId;
    const url = `${c.base}/mission-templates/${id}`;
    const renamed = await req(c.s, 'PUT', url, { body: { name: 'Renamed' } });
    expect(renamed.status).toBe(200);
    expect(renamed.json.runtimeSync).toBe('applied');
    expect(renamed.json.template).toMatchObject({ name: 'Renamed', parameters: { bladeHeightMm: 40 }, prerequisites: { minBatteryPct: 30 }, version: 2 });
    expect(renamed.json.template.steps).toEqual(created.json.template.steps);

    // Steps: `mow` listed without config keeps its config; `go` dropped; a new `dock` step added.
    const edited = await req(c.s, 'PUT', url, { body: { steps: [{ stepId: 'mow' }, { kind: 'dock' }] } });
    expect(edited.status).toBe(200);
    const steps = edited.json.template.steps;
    expect(steps).toHaveLength(2);
    expect(steps[0]).toEqual({ stepId: 'mow', kind: 'cover_area', config: { spacingM: 0.5 } });
    expect(steps[1]).toMatchObject({ kind: 'dock', config: {} });
    expect((await req(c.s, 'PUT', url, { body: { steps: [{ stepId: 'new-one' }] } })).status).toBe(400);
    expect((await req(c.s, 'GET', url)).json.version).toBe(3);
  });

  it('delete is refused (409) while a schedule references the template or a robot runs it', async () => {
    const c = await setup();
    const id = (await c.template()).json.missionId;
    const url = `${c.base}/mission-templates/${id}`;
    await c.s.store.index.put(`schedulesByTemplate/${id}/sched-1`, true);
    const bySchedule = await req(c.s, 'DELETE', url);
    expect(bySchedule).toMatchObject({ status: 409, json: { code: 'conflict', error: expect.stringContaining('schedule sched-1') } });
    await c.s.store.index.remove(`schedulesByTemplate/${id}/sched-1`);
    await c.s.store.index.put(`activeRunsByTemplate/${id}/run-1`, true);
    const byRun = await req(c.s, 'DELETE', url);
    expect(byRun).toMatchObject({ status: 409, json: { code: 'conflict', error: expect.stringContaining('run-1') } });
    await c.s.store.index.remove(`activeRunsByTemplate/${id}/run-1`);
    const deleted = await req(c.s, 'DELETE', url);
    expect(deleted).toMatchObject({ status: 200, json: { success: true, runtimeSync: 'applied', deleted: true, missionId: id } });
    expect((await req(c.s, 'GET', url)).status).toBe(404);
    expect(c.runtime().template(c.s.fleetId, id)).toBeUndefined();
  });

  it('PUT …/enabled switches dispatch in the live runtime', async () => {
    const c = await setup();
    const id = (await c.template()).json.missionId;
    expect((await c.op({ action: 'start' })).status).toBe(200);
    expect(c.runtime().isDispatchable(c.s.fleetId, id)).toBe(true);
    const off = await req(c.s, 'PUT', `${c.base}/mission-templates/${id}/enabled`, { body: { enabled: false } });
    expect(off).toMatchObject({ status: 200, json: { runtimeSync: 'applied', template: { enabled: false } } });
    expect(c.runtime().isDispatchable(c.s.fleetId, id)).toBe(false);
    expect(c.runtime().blockedReason(c.s.fleetId, id)).toBe('template_disabled');
    const on = await req(c.s, 'PUT', `${c.base}/mission-templates/${id}/enabled`, { body: { enabled: true } });
    expect(on.json.template.enabled).toBe(true);
    expect(c.runtime().isDispatchable(c.s.fleetId, id)).toBe(true);
    expect((await req(c.s, 'PUT', `${c.base}/mission-templates/${id}/enabled`, { body: { enabled: 'yes' } })).status).toBe(400);
    expect((await req(c.s, 'PUT', `${c.base}/mission-templates/${id}/enabled`, { body: { enabled: false }, key: c.s.only['missions:read'] })).status).toBe(403);
  });

  it('answers 202 runtimeSync pending when the live runtime is slow; the change is committed and adopted later', async () => {
    const c = await setup({ syncWaitMs: 100 });
    const id = (await c.template()).json.missionId;
    await c.op({ action: 'start' });
    let release = (): void => {};
    c.slow.gate = new Promise<void>((r) => (release = r));
    const off = await req(c.s, 'PUT', `${c.base}/mission-templates/${id}/enabled`, { body: { enabled: false } });
    expect(off.status).toBe(202);
    expect(off.json).toMatchObject({ success: false, persistenceState: 'committed', runtimeSync: 'pending', runtimeSyncError: expect.stringContaining('100 ms') });
    // Committed (not rolled back), not yet live.
    expect((await req(c.s, 'GET', `${c.base}/mission-templates/${id}`)).json.enabled).toBe(false);
    expect(c.runtime().isDispatchable(c.s.fleetId, id)).toBe(true);
    c.slow.gate = null;
    release();
    await expect.poll(() => c.runtime().isDispatchable(c.s.fleetId, id)).toBe(false);
  });

  it('a fleet-scoped path of another org or a foreign fleet is refused', async () => {
    const c = await setup();
    expect((await req(c.s, 'GET', `/v1/orgs/00000000-0000-4000-8000-000000000000/fleets/${c.s.fleetId}/mission-templates`)).status).toBe(403);
    expect((await req(c.s, 'GET', `/v1/orgs/${c.s.orgId}/fleets/00000000-0000-4000-8000-000000000000/mission-templates`)).status).toBe(404);
  });
});
