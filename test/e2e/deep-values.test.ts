// Issue 8 item 11 through the real `fleetgw serve`: free-form values (template parameters, step config,
// action arguments, config values) are bounded in depth and size at validation, with a 400 naming the
// field; and a record stored before the bound, nested 1,249 levels deep, still reads and updates after
// a restart (it answered 500 to every PUT).
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';

const d = makeDataDir('fleetgw-deep-');
let gw: RunningGateway;
let base: string;
let featureId: string;
const templates = `/v1/orgs/${d.orgId}/fleets/${d.fleetId}/mission-templates`;
const square = { type: 'Polygon', coordinates: [[[10, 50], [10.001, 50], [10.001, 50.001], [10, 50.001], [10, 50]]] };

/** `{"a":{"a":…1…}}` with `levels` objects. */
const nestedText = (levels: number): string => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);

const DEEP_TEXT = nestedText(1249);

let n = 0;
const create = (parameters: string) =>
  api(base, d.apiKey, templates, {
    method: 'POST',
    body: `{"name":"t","featureId":"${featureId}","steps":[{"kind":"cover_area"}],"parameters":${parameters}}`,
    headers: { 'idempotency-key': `deep-${++n}` },
  });

beforeAll(async () => {
  gw = await startGatewayProcess(d.dataDir);
  base = gw.ready.http;
  const f = await api(base, d.apiKey, `/v1/orgs/${d.orgId}/fleets/${d.fleetId}/features`, { method: 'POST', body: JSON.stringify({ name: 'Lawn', geometry: square }) });
  featureId = f.body.featureId;
});
afterAll(async () => {
  await gw.stop();
  rmSync(d.dataDir, { recursive: true, force: true });
});

describe('bounds on free-form values', () => {
  it('32 levels are stored; 33 are a 400 naming the field', async () => {
    expect((await create(nestedText(32))).status).toBe(201);
    const r = await create(nestedText(33));
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: 'Invalid request body: parameters must not nest deeper than 32 levels.', code: 'bad_request' });
  });

  it('depths that used to overflow the stack (1,500, 2,000) are a 400, not a 500', async () => {
    for (const levels of [1500, 2000]) {
      const r = await create(nestedText(levels));
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('Invalid request body: parameters.a.a…: nesting deeper than 64.');
    }
  });

  it('a step config is bounded too, and so is the number of values', async () => {
    const step = await api(base, d.apiKey, templates, {
      method: 'POST',
      body: `{"name":"t","featureId":"${featureId}","steps":[{"kind":"cover_area","config":${nestedText(40)}}]}`,
    });
    expect(step.status).toBe(400);
    expect(step.body.error).toBe('Invalid request body: steps[0].config must not nest deeper than 32 levels.');
    const wide = await create(JSON.stringify({ list: Array.from({ length: 10_001 }, (_, i) => i) }));
    expect(wide.status).toBe(400);
    expect(wide.body.error).toBe('Invalid request body: parameters must hold at most 10000 values.');
  });
});

describe('a record stored before the bound', () => {
  it('nested 1,249 levels deep: reads and updates after a restart, and keeps its parameters', async () => {
    const made = await create('{"k":1}');
    expect(made.status).toBe(201);
    const missionId: string = made.body.missionId;
    await gw.stop();

    // Straight into LMDB with lmdb-js's default msgpack encoding, the way records were written before
    // the bound. In a child process with a larger stack: msgpack's recursion needs more stack for 1,249
    // levels than this test process has left (the gateway, with a shallow stack, had managed it).
    const script = `
      import { open } from 'lmdb';
      const [path, id, levels] = process.argv.slice(1);
      const root = open({ path, maxDbs: 32, compression: false });
      const db = root.openDB({ name: 'templates' });
      let deep = 1;
      for (let i = 0; i < Number(levels); i++) deep = { a: deep };
      await db.put(id, { ...db.get(id), parameters: deep });
      await root.close();`;
    const child = spawnSync(process.execPath, ['--stack-size=4000', '--input-type=module', '-e', script, join(d.dataDir, 'lmdb'), missionId, '1249'], { encoding: 'utf8' });
    expect(child.stderr).toBe('');
    expect(child.status).toBe(0);

    gw = await startGatewayProcess(d.dataDir);
    base = gw.ready.http;
    const got = await api(base, d.apiKey, `${templates}/${missionId}`);
    expect(got.status).toBe(200);
    // Compared as text: a deep equality check would recurse 1,249 levels in this process.
    expect(JSON.stringify(got.body.parameters)).toBe(DEEP_TEXT);

    const put = await api(base, d.apiKey, `${templates}/${missionId}`, { method: 'PUT', body: JSON.stringify({ name: 'renamed' }) });
    expect(put.status, gw.stderr().slice(-1500)).toBe(200);

    await gw.stop();
    gw = await startGatewayProcess(d.dataDir);
    base = gw.ready.http;
    const again = await api(base, d.apiKey, `${templates}/${missionId}`);
    expect(again.status).toBe(200);
    expect(again.body.name).toBe('renamed');
    expect(JSON.stringify(again.body.parameters)).toBe(DEEP_TEXT);
    // Replacing the deep value with a bounded one works as for any record.
    const replaced = await api(base, d.apiKey, `${templates}/${missionId}`, { method: 'PUT', body: JSON.stringify({ parameters: { k: 2 } }) });
    expect(replaced.status).toBe(200);
    expect((await api(base, d.apiKey, `${templates}/${missionId}`)).body.parameters).toEqual({ k: 2 });
  });
});
