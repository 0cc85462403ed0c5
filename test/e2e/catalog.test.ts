// The catalog in the real `fleetgw serve` process: a template create replays its original answer after
// the gateway process is restarted, and the operation's state and timeline survive the restart.
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { adminJson } from '../support/cli.js';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';

describe('catalog across a gateway restart', () => {
  const d = makeDataDir();
  let gw: RunningGateway | undefined;
  afterAll(async () => {
    await gw?.stop();
    rmSync(d.dataDir, { recursive: true, force: true });
  });

  it('replays an idempotent template create and keeps the operation and its events', async () => {
    adminJson(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'mower-1', '--capabilities', 'mow']);
    gw = await startGatewayProcess(d.dataDir);
    const base = `/v1/orgs/${d.orgId}/fleets/${d.fleetId}`;
    const square = { type: 'Polygon', coordinates: [[[10, 50], [10.001, 50], [10.001, 50.001], [10, 50.001], [10, 50]]] };
    const feature = await api(gw.ready.http, d.apiKey, `${base}/features`, { method: 'POST', body: JSON.stringify({ name: 'Lawn', geometry: square }) });
    expect(feature.status).toBe(201);
    const body = JSON.stringify({ name: 'Mow', featureId: feature.body.featureId, capabilities: ['mow'], steps: [{ kind: 'cover_area', config: { spacingM: 0.4 } }] });
    const create = () => api(gw!.ready.http, d.apiKey, `${base}/mission-templates`, { method: 'POST', body, headers: { 'idempotency-key': 'e2e-create-1' } });
    const first = await create();
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ success: true, runtimeSync: 'applied' });
    const started = await api(gw.ready.http, d.apiKey, '/v1/agent/control-operation', { method: 'POST', body: JSON.stringify({ org_id: d.orgId, fleet_id: d.fleetId, action: 'start' }) });
    expect(started.body.operation.state).toBe('running');

    expect(await gw.stop('SIGTERM')).toBe(0);
    gw = await startGatewayProcess(d.dataDir);

    const again = await create();
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const list = await api(gw.ready.http, d.apiKey, `${base}/mission-templates`);
    expect(list.body.items).toHaveLength(1);
    // The live runtime reloaded the operation: pausing works from the persisted running state.
    const paused = await api(gw.ready.http, d.apiKey, '/v1/agent/control-operation', { method: 'POST', body: JSON.stringify({ org_id: d.orgId, fleet_id: d.fleetId, action: 'pause' }) });
    expect(paused.body).toMatchObject({ changed: true, operation: { state: 'paused', operation_id: first.body.operationId } });
    const events = await api(gw.ready.http, d.apiKey, `/v1/events?fleet_id=${d.fleetId}&correlation_id=${first.body.operationId}`);
    expect(events.body.items.map((e: any) => e.kind)).toEqual(['operation.created', 'operation.started', 'operation.paused']);
  });
});
