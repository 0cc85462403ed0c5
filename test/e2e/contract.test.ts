/**
 * The contract test: every operation /openapi.json publishes, called through real HTTP against the
 * real `fleetgw serve` (dist: `npm run build` first) with simulated robots (`fleetgw sim`) on the
 * real robot link, at least once with success and once with its main error. Every live response is
 * validated against the schema the served document publishes for its status (JSON Schema 2020-12);
 * the document's object schemas are all closed (`additionalProperties: false`) or explicitly
 * free-form (`x-free-form`), so a field a handler adds without publishing it fails validation.
 *
 * The last case derives the operation list from the served document and fails, naming them, for
 * operations not exercised with both a success and an error status.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CATALOG, type ErrorId } from '../../src/errors/catalog.js';
import { RobotAgent } from '../../src/agent/agent.js';
import { HealthSeverity } from '../../src/gen/fleetgw/v1/robot_link_pb.js';
import { adminJson, FLEETGW_BIN } from '../support/cli.js';
import { makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { until } from '../support/until.js';

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as unknown as (a: Ajv2020) => Ajv2020;

type Json = Record<string, any>;

interface Operation {
  id: string;
  method: string;
  path: string;
  op: Json;
}

interface Outcome {
  status: number;
  body: any;
  headers: Headers;
}

const DEPOT = { latitude: 52.0, longitude: 5.0 };
const USER_PASSWORD = 'contract test password';
const SQUARE = { type: 'Polygon', coordinates: [[[5, 52], [5.001, 52], [5.001, 52.001], [5, 52.001], [5, 52]]] };

let d: ReturnType<typeof makeDataDir>;
let gw: RunningGateway;
let sim: ChildProcess | undefined;
let doc: Json;
let base: string;
let readKey: string;
const robots: { robotId: string; robotToken: string }[] = [];
let inactiveRobot: string;
let inactiveToken: string;
const operations = new Map<string, Operation>();
/** operationId -> statuses seen. */
const seen = new Map<string, Set<number>>();
const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
const validators = new Map<string, ValidateFunction>();
/** Errors an operation returned that its `x-errors` list does not publish. */
const unpublished: string[] = [];

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const templatePattern = (template: string): RegExp => new RegExp(`^${template.split(/\{\w+\}/).map(escapeRegExp).join('.+')}$`, 's');

/** Each catalog entry's message template as a pattern (placeholders match any text). */
const TEMPLATES = (Object.entries(ERROR_CATALOG) as [ErrorId, (typeof ERROR_CATALOG)[ErrorId]][]).map(([id, e]) => ({
  id,
  entry: e,
  pattern: templatePattern(e.template),
}));

/** The catalog entries an error body can come from (same status, code and message shape). */
function catalogIdsOf(status: number, body: { error: string; code: string }): ErrorId[] {
  return TEMPLATES.filter((t) => t.entry.status === status && t.entry.code === body.code && t.pattern.test(body.error)).map((t) => t.id);
}

beforeAll(async () => {
  d = makeDataDir('fleetgw-contract-');
  for (let i = 0; i < 2; i++) robots.push(adminJson(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', `sim${i}`]));
  ({ robotId: inactiveRobot, robotToken: inactiveToken } = adminJson<{ robotId: string; robotToken: string }>(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'spare', '--inactive']));
  readKey = adminJson<{ apiKey: string }>(['create-key', '--data-dir', d.dataDir, '--org', d.orgId, '--permissions', 'robots:read']).apiKey;
  const user = spawnSync(process.execPath, [FLEETGW_BIN, 'admin', 'create-user', '--data-dir', d.dataDir, '--org', d.orgId, '--email', 'ops@acme.test', '--role', 'operator'], { input: USER_PASSWORD, encoding: 'utf8' });
  expect(user.status, user.stderr).toBe(0);
  const admin = spawnSync(process.execPath, [FLEETGW_BIN, 'admin', 'create-user', '--data-dir', d.dataDir, '--org', d.orgId, '--email', 'admin@acme.test', '--role', 'admin'], { input: USER_PASSWORD, encoding: 'utf8' });
  expect(admin.status, admin.stderr).toBe(0);
  // Alerts: every simulated battery (60-100 %) reads below 100, so battery_low alerts exist to read and acknowledge.
  gw = await startGatewayProcess(d.dataDir, ['--insecure-http'], { FLEETGW_ALERT_BATTERY_LOW_PCT: '100', FLEETGW_ALERT_BATTERY_CLEAR_PCT: '100' });
  base = gw.ready.http;
  const robotsFile = join(d.dataDir, 'sim-robots.json');
  writeFileSync(robotsFile, JSON.stringify(robots));
  sim = spawn(process.execPath, [FLEETGW_BIN, 'sim', '--grpc', gw.ready.grpc, '--robots-file', robotsFile, '--hz', '5'], { stdio: ['ignore', 'pipe', 'pipe'] });
  sim.stderr?.resume();
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: sim!.stdout! }).on('line', (l) => l.includes('sim-started') && resolve());
    sim!.once('exit', (code) => reject(new Error(`fleetgw sim exited with ${String(code)}`)));
  });

  doc = (await (await fetch(`${base}/openapi.json`)).json()) as Json;
  ajv.addSchema(doc, 'openapi');
  for (const [path, item] of Object.entries(doc.paths as Json)) {
    for (const [method, op] of Object.entries(item as Json)) {
      const o = op as Json;
      operations.set(o.operationId as string, { id: o.operationId as string, method: method.toUpperCase(), path, op: o });
    }
  }
  // The robots are on the link and have reported telemetry.
  for (const r of robots) {
    await until(async () => {
      const res = await fetch(`${base}/v1/robots/${r.robotId}`, { headers: { authorization: `Bearer ${d.apiKey}` } });
      const v = (await res.json()) as Json;
      return v.online === true && v.statusTelemetry !== null;
    }, 20_000, `robot ${r.robotId} online with telemetry`);
  }
}, 90_000);

// A bound, not a wait: the simulator's and the gateway's drains on a loaded 2-core machine took longer
// than the default hook timeout (60 s).
afterAll(async () => {
  // A simulator already ended by a signal has exitCode null too, and would never emit 'exit' again.
  if (sim && sim.exitCode === null && sim.signalCode === null) {
    const exited = new Promise((r) => sim!.once('exit', r));
    sim.kill('SIGTERM');
    await exited;
  }
  await gw?.stop();
  if (d) rmSync(d.dataDir, { recursive: true, force: true });
}, 180_000);

/** JSON pointer escaping (RFC 6901). */
const ptr = (s: string): string => s.replaceAll('~', '~0').replaceAll('/', '~1');

/** Follows a local `$ref` of the document. */
function deref(node: Json): Json {
  if (typeof node.$ref !== 'string') return node;
  return node.$ref.slice(2).split('/').reduce((n: Json, k) => n[k.replaceAll('~1', '/').replaceAll('~0', '~')] as Json, doc);
}

/** The published schema's validator for one response of an operation (null: no body published). */
function validatorFor(o: Operation, status: number): ValidateFunction | null {
  const key = `${o.id} ${status}`;
  const cached = validators.get(key);
  if (cached) return cached;
  const raw = (o.op.responses as Json)[String(status)] as Json | undefined;
  expect(raw, `${o.id}: status ${status} is not published`).toBeDefined();
  const response = deref(raw!);
  if (response.content === undefined) return null;
  const schemaAt = typeof raw!.$ref === 'string'
    ? `${raw!.$ref.slice(1)}/content/application~1json/schema`
    : `/paths/${ptr(o.path)}/${o.method.toLowerCase()}/responses/${status}/content/application~1json/schema`;
  const v = ajv.compile({ $ref: `openapi#${schemaAt}` });
  validators.set(key, v);
  return v;
}

interface CallOptions {
  path?: Record<string, string>;
  query?: Record<string, string | number | boolean>;
  body?: unknown;
  /** API key; null sends none. Default: the all-permission key (none when `session` is given). */
  key?: string | null;
  idem?: string;
  /** A user session: its cookie, and its CSRF token (sent unless `csrf` is false). */
  session?: { cookie: string; csrf: string };
  csrf?: boolean;
  /** More request headers (the MCP endpoint's Mcp-Session-Id). */
  headers?: Record<string, string>;
}

/**
 * Calls an operation of the served document by its operationId, validates the answer against the
 * schema published for its status, and records the status for the coverage check.
 */
async function call(operationId: string, opts: CallOptions = {}): Promise<Outcome> {
  const o = operations.get(operationId);
  expect(o, `operation ${operationId} is not in /openapi.json`).toBeDefined();
  const path = o!.path.replace(/\{([^}]+)\}/g, (_m, name: string) => {
    const v = opts.path?.[name] ?? ({ org_id: d.orgId, fleet_id: d.fleetId } as Record<string, string>)[name];
    expect(v, `${operationId}: path parameter ${name}`).toBeDefined();
    return encodeURIComponent(v!);
  });
  const qs = opts.query ? `?${new URLSearchParams(Object.entries(opts.query).map(([k, v]): [string, string] => [k, String(v)])).toString()}` : '';
  const headers: Record<string, string> = {};
  const key = opts.key === undefined ? (opts.session === undefined ? d.apiKey : null) : opts.key;
  if (key !== null) headers.authorization = `Bearer ${key}`;
  if (opts.session !== undefined) {
    headers.cookie = opts.session.cookie;
    if (opts.csrf !== false) headers['x-csrf-token'] = opts.session.csrf;
  }
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  if (opts.idem !== undefined) headers['idempotency-key'] = opts.idem;
  Object.assign(headers, opts.headers);
  const res = await fetch(`${base}${path}${qs}`, { method: o!.method, headers, ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}) });
  const bytes = new Uint8Array(await res.arrayBuffer());
  // A non-JSON body (the MCAP export): its media type must be the one the operation publishes.
  const mediaType = (res.headers.get('content-type') ?? '').split(';')[0]!;
  const content = deref(((o!.op.responses as Json)[String(res.status)] ?? {}) as Json).content as Json | undefined;
  if (res.status < 300 && bytes.length > 0 && mediaType !== 'application/json') {
    expect(Object.keys(content ?? {}), `${operationId} ${res.status}: ${mediaType} is not published`).toContain(mediaType);
    let statuses = seen.get(operationId);
    if (!statuses) seen.set(operationId, (statuses = new Set()));
    statuses.add(res.status);
    return { status: res.status, body: bytes, headers: res.headers };
  }
  const text = new TextDecoder().decode(bytes);
  const body: unknown = text === '' ? undefined : JSON.parse(text);
  const validate = validatorFor(o!, res.status);
  if (validate === null) {
    expect(text, `${operationId} ${res.status}: no body is published`).toBe('');
  } else {
    expect(validate(body), `${operationId} ${res.status}: ${JSON.stringify(validate.errors)}\n${text.slice(0, 2000)}`).toBe(true);
  }
  if (res.status >= 400 && typeof ((o!.op.responses as Json)[String(res.status)] as Json).$ref === 'string') {
    // A catalog error: it must be one the operation publishes.
    const candidates = catalogIdsOf(res.status, body as { error: string; code: string });
    const published = o!.op['x-errors'] as string[];
    if (!candidates.some((id) => published.includes(id))) unpublished.push(`${operationId} ${res.status}: ${candidates.join(' | ') || '(no catalog entry)'}: ${text}`);
  }
  let statuses = seen.get(operationId);
  if (!statuses) seen.set(operationId, (statuses = new Set()));
  statuses.add(res.status);
  return { status: res.status, body, headers: res.headers };
}

/** Calls and expects a status. */
async function expectStatus(status: number, operationId: string, opts: CallOptions = {}): Promise<any> {
  const r = await call(operationId, opts);
  expect(r.status, `${operationId}: ${JSON.stringify(r.body)}`).toBe(status);
  return r.body;
}

const ids = (): { org_id: string; fleet_id: string } => ({ org_id: d.orgId, fleet_id: d.fleetId });
const robotPath = (i = 0): { path: Record<string, string> } => ({ path: { robot_id: robots[i]!.robotId } });
const later = (ms: number): number => Date.now() + ms;

describe('the published document', () => {
  it('closes every object schema except explicit free-form ones', () => {
    const open: string[] = [];
    const walk = (node: unknown, where: string): void => {
      if (Array.isArray(node)) return node.forEach((n, i) => walk(n, `${where}/${i}`));
      if (node === null || typeof node !== 'object') return;
      const n = node as Json;
      const isObject = n.type === 'object' || n.properties !== undefined;
      if (isObject && n.additionalProperties !== false && n['x-free-form'] === undefined && n.patternProperties === undefined && typeof n.additionalProperties !== 'object') {
        open.push(where);
      }
      for (const [k, v] of Object.entries(n)) {
        // A `properties` map is not a schema itself (GeoJSON's Feature has a member named `properties`).
        if (k === 'properties' && v !== null && typeof v === 'object' && !Array.isArray(v)) {
          for (const [name, p] of Object.entries(v as Json)) walk(p, `${where}/properties/${ptr(name)}`);
        } else {
          walk(v, `${where}/${ptr(k)}`);
        }
      }
    };
    walk(doc.components.schemas, '#/components/schemas');
    walk(doc.paths, '#/paths');
    // The document itself (GET /openapi.json) is the one deliberately open response.
    expect(open.filter((w) => !w.startsWith('#/paths/~1openapi.json'))).toEqual([]);
  });

  it('validates with teeth: a body missing a field or carrying an undeclared one fails', () => {
    const me = validatorFor(operations.get('getMe')!, 200)!;
    const good = { actorType: 'api_key', apiKeyId: randomUUID(), orgId: randomUUID(), fleetId: null, permissions: [] };
    expect(me(good)).toBe(true);
    expect(me({ ...good, extra: 1 })).toBe(false);
    const { orgId: _, ...missing } = good;
    expect(me(missing)).toBe(false);
    const runs = validatorFor(operations.get('listMissionRuns')!, 200)!;
    expect(runs({ items: [{ runId: randomUUID() }], next_cursor: null })).toBe(false);
  });

  it('names every resource schema and declares Idempotency-Key where the route requires it', () => {
    const names = Object.keys(doc.components.schemas as Json);
    for (const n of ['RobotView', 'Command', 'Delivery', 'MissionTemplate', 'Feature', 'ScheduleRow', 'MissionRun', 'Event', 'AuditEntry', 'ErrorBody', 'StreamTicket', 'Session', 'ApiKey', 'ApiKeyCreated']) {
      expect(names).toContain(n);
    }
    expect(doc.servers[0].url).toBe(base);
    const idem = (id: string): Json | undefined => ((operations.get(id)!.op.parameters ?? []) as Json[]).find((p) => p.in === 'header' && p.name === 'Idempotency-Key');
    for (const id of ['submitJob', 'deployMission', 'scheduleMission', 'scheduleCommand', 'createMissionTemplate']) expect(idem(id)?.required, id).toBe(true);
    expect(idem('createFeature')?.required).toBe(false);
    // Every other state-changing route honours an optional key (docs/api-conventions.md, Idempotency).
    expect(idem('editSchedule')?.required).toBe(false);
    expect(idem('createApiKey')?.required).toBe(true);
    expect(doc.components.securitySchemes.sessionCookie).toMatchObject({ type: 'apiKey', in: 'cookie', name: 'fleetgw_session' });
    expect(operations.get('createApiKey')!.op.security).toEqual([{ sessionCookie: [] }]);
    expect(operations.get('getMe')!.op.security).toEqual([{ bearerAuth: [] }, { sessionCookie: [] }]);
  });
});

describe('every operation, through real HTTP', () => {
  const state: Record<string, string> = {};

  it('discovery', async () => {
    const published = await expectStatus(200, 'getOpenApi', { key: null });
    expect(published).toEqual(doc);
    await expectStatus(400, 'getOpenApi', { key: null, query: { x: 1 } });
    expect((await expectStatus(200, 'getMe')).orgId).toBe(d.orgId);
    await expectStatus(401, 'getMe', { key: null });
    expect((await expectStatus(200, 'listFleets')).items).toEqual([{ fleetId: d.fleetId, name: 'Yard' }]);
    await expectStatus(403, 'listFleets', { path: { org_id: randomUUID() } });
  });

  it('health probes (no credential, status words only)', async () => {
    expect(await expectStatus(200, 'getLiveness', { key: null })).toEqual({ status: 'ok' });
    await expectStatus(400, 'getLiveness', { key: null, query: { verbose: 1 } });
    expect(await expectStatus(200, 'getReadiness', { key: null })).toEqual({ status: 'ready' });
    await expectStatus(400, 'getReadiness', { key: null, query: { verbose: 1 } });
  });

  it('robots', async () => {
    const list = await expectStatus(200, 'listRobots', { query: { fleet_id: d.fleetId } });
    expect(list).toHaveLength(3);
    const one = await expectStatus(200, 'getRobot', robotPath());
    expect(one.motionTelemetry).not.toBeNull();
    await expectStatus(200, 'getRobot', { path: { robot_id: inactiveRobot } });
    await expectStatus(404, 'listRobots', { query: { fleet_id: randomUUID() } });
    await expectStatus(404, 'getRobot', { path: { robot_id: randomUUID() } });
  });

  it('robot commands', async () => {
    const goTo = await expectStatus(200, 'robotGoTo', { ...robotPath(), body: { ...DEPOT, wait_for_ack: true } });
    expect(goTo.delivery.state).toBe('agent_received');
    state.commandId = goTo.delivery.commandId as string;
    await expectStatus(422, 'robotGoTo', { ...robotPath(), body: { latitude: 10, longitude: 10 } });
    await expectStatus(200, 'robotSetMode', { ...robotPath(1), body: { mode: 'autonomous', wait_for_ack: true } });
    await expectStatus(422, 'robotSetMode', { ...robotPath(1), body: { mode: 'flying' } });
    await expectStatus(200, 'robotInvokeService', { ...robotPath(1), body: { action_name: 'beep', arguments: { durationMs: 10 } } });
    await expectStatus(422, 'robotInvokeService', { ...robotPath(1), body: { action_name: 'warp_drive' } });
    await expectStatus(200, 'robotUpdateSettings', { ...robotPath(1), body: { settings: { max_speed_mps: 1 } } });
    await expectStatus(422, 'robotUpdateSettings', { ...robotPath(1), body: { settings: { max_speed_mps: 99 } } });
    await expectStatus(503, 'robotSetMode', { path: { robot_id: inactiveRobot }, body: { mode: 'manual' } });
  });

  it('robot configuration and onboard settings', async () => {
    const config = await expectStatus(200, 'getRobotConfig', robotPath());
    expect(config.values.site_name).toBe('depot');
    expect((await expectStatus(200, 'updateRobotConfig', { ...robotPath(), body: { values: { site_name: 'yard' } } })).values.site_name).toBe('yard');
    await expectStatus(422, 'updateRobotConfig', { ...robotPath(), body: { values: { no_such_key: 1 } } });
    await expectStatus(404, 'getRobotConfig', { path: { robot_id: randomUUID() } });
    await expectStatus(200, 'getRobotOnboardSettings', robotPath());
    await expectStatus(200, 'updateRobotOnboardSettings', { ...robotPath(), body: { values: { night_mode: true } } });
    await expectStatus(422, 'updateRobotOnboardSettings', { ...robotPath(), body: { values: { night_mode: 'yes' } } });
    await expectStatus(503, 'getRobotOnboardSettings', { path: { robot_id: inactiveRobot } });
  });

  it('bulk robot control, the audit log and command reads', async () => {
    const r1 = robots[1]!.robotId;
    const ok = await expectStatus(200, 'controlRobot', { body: { ...ids(), action: 'mode', robot_id: r1, mode: 'autonomous', wait_for_ack: true } });
    expect(ok.outcomes[0].delivery.state).toBe('agent_received');
    const partial = await expectStatus(207, 'controlRobot', { body: { ...ids(), action: 'mode', robot_ids: [r1, randomUUID()], mode: 'autonomous' } });
    expect(partial.code).toBe('partial_failure');
    const failed = await expectStatus(502, 'controlRobot', { body: { ...ids(), action: 'start', robot_ids: [randomUUID()] } });
    expect(failed.code).toBe('unavailable');
    await expectStatus(400, 'controlRobot', { body: { ...ids(), action: 'mode', robot_id: r1 } });

    const page = await expectStatus(200, 'getAuditLog', { query: { fleet_id: d.fleetId, limit: 2 } });
    expect(page.items.length).toBe(2);
    await expectStatus(200, 'getAuditLog', { query: { fleet_id: d.fleetId, limit: 2, cursor: page.next_cursor as string } });
    await expectStatus(400, 'getAuditLog', { query: { fleet_id: d.fleetId, cursor: 'not-a-cursor' } });

    const cmd = await expectStatus(200, 'getRobotCommand', { path: { command_id: state.commandId! } });
    expect(cmd.args).not.toBeNull();
    const config = (await call('getAuditLog', { query: { fleet_id: d.fleetId, robot_id: robots[0]!.robotId } })).body.items.find((e: Json) => e.action === 'config');
    expect((await expectStatus(200, 'getRobotCommand', { path: { command_id: config.commandId as string } })).result).not.toBeNull();
    await expectStatus(200, 'getRobotCommand', { path: { command_id: state.commandId! }, key: readKey });
    await expectStatus(404, 'getRobotCommand', { path: { command_id: randomUUID() } });
  });

  it('telemetry stream tickets', async () => {
    const t = await expectStatus(201, 'createTelemetryStreamTicket', { body: ids() });
    expect(t.url).toMatch(/^ws:/);
    await expectStatus(403, 'createTelemetryStreamTicket', { body: { ...ids(), org_id: randomUUID() } });
  });

  it('features', async () => {
    const f = await expectStatus(201, 'createFeature', { body: { name: 'yard', geometry: SQUARE }, idem: randomUUID() });
    state.featureId = f.featureId as string;
    const spare = await expectStatus(201, 'createFeature', { body: { name: 'spare', geometry: SQUARE } });
    await expectStatus(400, 'createFeature', { body: { name: 'open ring', geometry: { type: 'Polygon', coordinates: [[[5, 52], [5.001, 52], [5.001, 52.001], [5, 52.001]]] } } });
    expect((await expectStatus(200, 'listFeatures')).items).toHaveLength(2);
    const firstFeature = await expectStatus(200, 'listFeatures', { query: { limit: 1 } });
    expect(firstFeature.items).toHaveLength(1);
    const restFeatures = await expectStatus(200, 'listFeatures', { query: { limit: 1, cursor: firstFeature.next_cursor as string } });
    expect(restFeatures).toMatchObject({ next_cursor: null });
    expect(restFeatures.items[0].featureId).not.toBe(firstFeature.items[0].featureId);
    await expectStatus(400, 'listFeatures', { query: { cursor: '1' } });
    await expectStatus(404, 'listFeatures', { path: { fleet_id: randomUUID() } });
    await expectStatus(200, 'getFeature', { path: { feature_id: state.featureId } });
    await expectStatus(404, 'getFeature', { path: { feature_id: randomUUID() } });
    await expectStatus(200, 'updateFeature', { path: { feature_id: state.featureId }, body: { name: 'yard north' } });
    await expectStatus(404, 'updateFeature', { path: { feature_id: randomUUID() }, body: { name: 'x' } });
    const locked = await expectStatus(200, 'controlFeature', { body: { ...ids(), action: 'lock', feature_id: spare.featureId as string, lock_reason: 'survey' } });
    expect(locked.feature.locked).toBe(true);
    // Field rule actions need directive_id (issue 10 part 1; they were "not supported yet" before).
    await expectStatus(400, 'controlFeature', { body: { ...ids(), action: 'enable_field_rule' } });
    await expectStatus(204, 'deleteFeature', { path: { feature_id: spare.featureId as string } });
    await expectStatus(404, 'deleteFeature', { path: { feature_id: spare.featureId as string } });
  });

  // ---- Issue 10 part 1: field rules (branch fieldrules) ----
  it('field rules', async () => {
    const geometry = { type: 'Polygon', coordinates: [[[DEPOT.longitude, DEPOT.latitude], [DEPOT.longitude + 0.0002, DEPOT.latitude], [DEPOT.longitude + 0.0002, DEPOT.latitude + 0.0002], [DEPOT.longitude, DEPOT.latitude]]] };
    const rule = { name: 'slow lane', type: 'speed_limit', geometry, parameters: { max_speed_mps: 0.5 } };
    const created = await expectStatus(201, 'upsertFieldRule', { body: { ...ids(), field_rule: rule } });
    expect(created.delivery.robots.every((r: { outcome: string }) => r.outcome === 'applied')).toBe(true);
    const directiveId = created.fieldRule.directiveId as string;
    await expectStatus(200, 'upsertFieldRule', { body: { ...ids(), directive_id: directiveId, field_rule: { ...rule, parameters: { max_speed_mps: 0.8 } } } });
    await expectStatus(400, 'upsertFieldRule', { body: { ...ids(), field_rule: { ...rule, parameters: {} } } });
    await expectStatus(404, 'upsertFieldRule', { body: { ...ids(), directive_id: randomUUID(), field_rule: rule } });
    const keepOut = await expectStatus(201, 'upsertFieldRule', { body: { ...ids(), field_rule: { name: 'pit', type: 'keep_out', geometry, parameters: {}, enabled: false } } });
    expect((await expectStatus(200, 'listFieldRules')).items).toHaveLength(2);
    const first = await expectStatus(200, 'listFieldRules', { query: { limit: 1 } });
    expect((await expectStatus(200, 'listFieldRules', { query: { limit: 1, cursor: first.next_cursor as string } })).next_cursor).toBeNull();
    expect((await expectStatus(200, 'listFieldRules', { query: { enabled: false } })).items).toHaveLength(1);
    await expectStatus(400, 'listFieldRules', { query: { type: 'no_entry' } });
    expect((await expectStatus(200, 'getFieldRule', { path: { directive_id: directiveId } })).parameters).toEqual({ maxSpeedMps: 0.8 });
    await expectStatus(404, 'getFieldRule', { path: { directive_id: randomUUID() } });
    const enabled = await expectStatus(200, 'controlFeature', { body: { ...ids(), action: 'enable_field_rule', directive_id: keepOut.fieldRule.directiveId as string } });
    expect(enabled.fieldRule.enabled).toBe(true);
    await expectStatus(404, 'controlFeature', { body: { ...ids(), action: 'disable_field_rule', directive_id: randomUUID() } });
    await expectStatus(200, 'deleteFieldRule', { path: { directive_id: keepOut.fieldRule.directiveId as string } });
    await expectStatus(200, 'deleteFieldRule', { path: { directive_id: directiveId } });
    await expectStatus(404, 'deleteFieldRule', { path: { directive_id: directiveId } });
  });
  // ---- end of issue 10 part 1 ----

  it('mission templates and the operation', async () => {
    const steps = [{ kind: 'wait', config: { seconds: 120 } }];
    await expectStatus(400, 'createMissionTemplate', { body: { name: 'patrol', featureId: state.featureId, steps } });
    const t = await expectStatus(201, 'createMissionTemplate', { body: { name: 'patrol', featureId: state.featureId, steps }, idem: randomUUID() });
    state.missionId = t.missionId as string;
    state.operationId = t.operationId as string;
    const other = await expectStatus(201, 'createMissionTemplate', { body: { name: 'spare', featureId: state.featureId, steps }, idem: randomUUID() });
    expect((await expectStatus(200, 'listMissionTemplates')).items).toHaveLength(2);
    const firstTemplate = await expectStatus(200, 'listMissionTemplates', { query: { limit: 1 } });
    expect((await expectStatus(200, 'listMissionTemplates', { query: { cursor: firstTemplate.next_cursor as string } })).items).toHaveLength(1);
    // A cursor of another list (here: templates, used on the fleet's features) is refused.
    expect(typeof firstTemplate.next_cursor).toBe('string');
    expect((await expectStatus(400, 'listFeatures', { query: { cursor: firstTemplate.next_cursor as string } })).error).toMatch(/^Invalid cursor: it was issued for a different query/);
    await expectStatus(404, 'listMissionTemplates', { path: { fleet_id: randomUUID() } });
    await expectStatus(200, 'getMissionTemplate', { path: { mission_id: state.missionId } });
    await expectStatus(404, 'getMissionTemplate', { path: { mission_id: randomUUID() } });
    await expectStatus(200, 'updateMissionTemplate', { path: { mission_id: state.missionId }, body: { priority: 5 } });
    await expectStatus(404, 'updateMissionTemplate', { path: { mission_id: randomUUID() }, body: { priority: 5 } });
    await expectStatus(200, 'setMissionTemplateEnabled', { path: { mission_id: state.missionId }, body: { enabled: true } });
    await expectStatus(404, 'setMissionTemplateEnabled', { path: { mission_id: randomUUID() }, body: { enabled: true } });
    await expectStatus(409, 'deleteFeature', { path: { feature_id: state.featureId! } });
    await expectStatus(200, 'deleteMissionTemplate', { path: { mission_id: other.missionId as string } });
    await expectStatus(404, 'deleteMissionTemplate', { path: { mission_id: other.missionId as string } });

    const started = await expectStatus(200, 'controlOperation', { body: { ...ids(), action: 'start', operation_id: state.operationId } });
    expect(started.operation.state).toBe('running');
    await expectStatus(409, 'controlOperation', { body: { ...ids(), action: 'start', operation_id: randomUUID() } });
  });

  it('mission tools and schedules', async () => {
    const r0 = robots[0]!.robotId;
    const deployed = await expectStatus(202, 'deployMission', { body: { ...ids(), mission_id: state.missionId, robot_ids: [r0] }, idem: randomUUID() });
    state.deployScheduleId = deployed.scheduleId as string;
    state.correlationId = deployed.correlationId as string;
    await expectStatus(404, 'deployMission', { body: { ...ids(), mission_id: randomUUID(), robot_ids: [] }, idem: randomUUID() });
    await expectStatus(409, 'deleteMissionTemplate', { path: { mission_id: state.missionId! } });

    const schedule = { timezone: 'Europe/Berlin', startTimeMs: later(3_600_000), kind: { cron: { expr: '0 3 * * *' } } };
    const s = await expectStatus(201, 'scheduleMission', { body: { ...ids(), mission_id: state.missionId, robot_ids: [], schedule }, idem: randomUUID() });
    state.scheduleId = s.scheduleId as string;
    await expectStatus(400, 'scheduleMission', { body: { ...ids(), mission_id: state.missionId, robot_ids: [], schedule: { ...schedule, timezone: 'Mars/Olympus' } }, idem: randomUUID() });
    await expectStatus(200, 'editSchedule', { body: { ...ids(), schedule_id: state.scheduleId, retry_limit: 2 } });
    await expectStatus(404, 'editSchedule', { body: { ...ids(), schedule_id: randomUUID(), retry_limit: 2 } });

    const job = { ...ids(), name: 'job', feature_id: state.featureId, capabilities: [], robot_ids: [], deployment_deadline_ms: 60_000, schedule: { timezone: 'UTC', startTimeMs: later(7_200_000), kind: 'once' } };
    const submitted = await call('submitJob', { body: job, idem: randomUUID() });
    expect([201, 202]).toContain(submitted.status);
    await expectStatus(400, 'submitJob', { body: job });

    const command = { ...ids(), command: { action: 'stop', robot_ids: [robots[1]!.robotId], reason: 'night' }, schedule: { timezone: 'UTC', startTimeMs: later(3_600_000), kind: { interval: { everySeconds: 3600 } } } };
    const c = await expectStatus(201, 'scheduleCommand', { body: command, idem: randomUUID() });
    await expectStatus(400, 'scheduleCommand', { body: { ...command, command: { action: 'mode', robot_ids: [robots[1]!.robotId] } }, idem: randomUUID() });
    expect((await expectStatus(200, 'listMissionSchedule', { query: { fleet_id: d.fleetId, id: c.scheduleId as string } })).command).toEqual({ action: 'stop', reason: 'night' });
    expect((await expectStatus(200, 'cancelSchedule', { body: { ...ids(), schedule_id: c.scheduleId as string } })).status).toBe('cancelled');
    // A cancelled schedule leaves the schedule reads (docs/missions.md, Schedule states).
    await expectStatus(404, 'listMissionSchedule', { query: { fleet_id: d.fleetId, id: c.scheduleId as string } });
    await expectStatus(404, 'cancelSchedule', { body: { ...ids(), schedule_id: randomUUID() } });

    await expectStatus(200, 'setMissionPriorities', { body: { ...ids(), priorities: [{ mission_id: state.missionId, priority: 7 }] } });
    await expectStatus(404, 'setMissionPriorities', { body: { ...ids(), priorities: [{ mission_id: randomUUID(), priority: 7 }] } });

    const all = await expectStatus(200, 'listMissionSchedule', { query: { fleet_id: d.fleetId } });
    expect(all.length).toBeGreaterThanOrEqual(3);
    expect(all.filter((r: Json) => r.kind === 'command')).toEqual([]);
    const page = await expectStatus(200, 'listMissionSchedule', { query: { fleet_id: d.fleetId, limit: 2 } });
    await expectStatus(200, 'listMissionSchedule', { query: { fleet_id: d.fleetId, limit: 2, before: page.next_cursor as string } });
    expect((await expectStatus(200, 'listMissionSchedule', { query: { fleet_id: d.fleetId, id: state.scheduleId } })).schedule.owner).toBeTruthy();
    await expectStatus(404, 'listMissionSchedule', { query: { fleet_id: d.fleetId, id: randomUUID() } });
  });

  it('mission runs, runtime status and events', async () => {
    const r0 = robots[0]!.robotId;
    let runs: Json[] = [];
    await until(async () => {
      runs = ((await call('listMissionRuns', { query: { fleet_id: d.fleetId, days: 1 } })).body as { items: Json[] }).items;
      return runs.some((r) => r.state === 'running');
    }, 20_000, 'the deployed run to be running');
    expect(runs[0]!.scheduleId).toBe(state.deployScheduleId);
    await expectStatus(400, 'listMissionRuns', { query: { fleet_id: d.fleetId, days: 0 } });
    const runPage = await expectStatus(200, 'listMissionRuns', { query: { fleet_id: d.fleetId, days: 1, limit: 1 } });
    expect(runPage.items).toHaveLength(1);
    if (runPage.next_cursor !== null) await expectStatus(200, 'listMissionRuns', { query: { fleet_id: d.fleetId, days: 1, limit: 1, cursor: runPage.next_cursor as string } });
    expect((await expectStatus(400, 'listMissionRuns', { query: { fleet_id: d.fleetId, days: 1, cursor: '100' } })).error).toMatch(/cursor/);

    expect((await expectStatus(200, 'getRuntimeStatus', { body: ids() })).kind).toBe('fleet');
    expect((await expectStatus(200, 'getRuntimeStatus', { body: { ...ids(), robot_id: r0 } })).assignment).not.toBeNull();
    expect((await expectStatus(200, 'getRuntimeStatus', { body: { ...ids(), schedule_id: state.scheduleId } })).kind).toBe('schedule');
    await expectStatus(200, 'getRuntimeStatus', { body: { ...ids(), schedule_id: state.deployScheduleId } });
    await expectStatus(400, 'getRuntimeStatus', { body: { ...ids(), robot_id: r0, schedule_id: state.scheduleId } });

    const paused = await expectStatus(200, 'controlMission', { body: { ...ids(), robot_id: r0, mission_id: state.missionId, action: 'pause', wait_for_ack: true } });
    expect(paused.delivery.state).toBe('agent_received');
    await expectStatus(404, 'controlMission', { body: { ...ids(), robot_id: robots[1]!.robotId, mission_id: state.missionId, action: 'pause' } });
    await expectStatus(200, 'controlMission', { body: { ...ids(), robot_id: r0, mission_id: state.missionId, action: 'abort', wait_for_ack: true } });

    const events = await expectStatus(200, 'listEvents', { query: { fleet_id: d.fleetId, correlation_id: state.correlationId!, limit: 2 } });
    expect(events.items).toHaveLength(2);
    await expectStatus(200, 'listEvents', { query: { fleet_id: d.fleetId, correlation_id: state.correlationId!, cursor: events.next_cursor as string } });
    await expectStatus(400, 'listEvents', { query: { fleet_id: d.fleetId, correlation_id: state.correlationId!, cursor: 'x' } });
    await expectStatus(400, 'listEvents', { query: { fleet_id: d.fleetId, correlation_id: state.correlationId!, cursor: '5' } });
    // A schedule id reads that schedule's timeline.
    const bySchedule = await expectStatus(200, 'listEvents', { query: { fleet_id: d.fleetId, correlation_id: state.deployScheduleId! } });
    expect(bySchedule.items.map((e: Json) => e.kind)).toContain('schedule.accepted');
  });

  // --- Issue 11 parts 1-3: the Agent read tools (query-entities, get-entity, resolve, get-map-context, explain-capability) ---
  it('agent read tools', async () => {
    const r0 = robots[0]!.robotId;
    const page = await expectStatus(200, 'queryEntities', { body: { ...ids(), kind: 'robot', limit: 1 } });
    expect(page.items[0]).toMatchObject({ kind: 'robot', status: { online: true } });
    await expectStatus(200, 'queryEntities', { body: { ...ids(), kind: 'robot', limit: 1, cursor: page.next_cursor as string } });
    await expectStatus(400, 'queryEntities', { body: { ...ids(), kind: 'robot', online: true, cursor: page.next_cursor as string } });
    const every = await expectStatus(200, 'queryEntities', {
      body: { ...ids(), kinds: ['robot', 'feature', 'operation', 'mission_template', 'scheduled_mission', 'scheduled_command', 'fault', 'mission_history', 'field_rule', 'object'] },
    });
    expect(every.kinds).toHaveLength(10);
    // Objects and faults appear when the simulated robots have reported some (perception, health) by now.
    const core = ['robot', 'feature', 'operation', 'mission_template', 'scheduled_mission', 'mission_history'];
    const kindsSeen = new Set<string>(every.items.map((i: Json) => String(i.kind)));
    expect(core.filter((k) => !kindsSeen.has(k))).toEqual([]);
    expect([...kindsSeen].filter((k) => !core.includes(k) && k !== 'object' && k !== 'fault')).toEqual([]);
    // The one command schedule was cancelled: it is not listed, and `cancelled` is no status to ask for.
    expect((await expectStatus(200, 'queryEntities', { body: { ...ids(), kind: 'scheduled_command' } })).items).toHaveLength(0);
    await expectStatus(400, 'queryEntities', { body: { ...ids(), kind: 'scheduled_command', status: 'cancelled' } });
    // Every non-mission command can be scheduled (issue 11 part 3); the row shows it back.
    const invoke = { action: 'invoke_action', robot_ids: [r0], action_name: 'beep', arguments: { durationMs: 100 } };
    await expectStatus(201, 'scheduleCommand', { body: { ...ids(), command: invoke, schedule: { timezone: 'UTC', startTimeMs: later(3_600_000), kind: 'once' } }, idem: randomUUID() });
    await expectStatus(400, 'scheduleCommand', { body: { ...ids(), command: { action: 'force_reset', robot_ids: [r0, robots[1]!.robotId] } }, idem: randomUUID() });
    const scheduled = await expectStatus(200, 'queryEntities', { body: { ...ids(), kind: 'scheduled_command', action: 'invoke_action' } });
    expect(scheduled.items[0].command).toEqual({ action: 'invoke_action', action_name: 'beep', arguments: { durationMs: 100 } });
    await expectStatus(400, 'queryEntities', { body: { ...ids(), kind: 'feature', online: true } });
    await expectStatus(200, 'queryEntities', { body: { ...ids(), kind: 'fault', active: true } });
    await expectStatus(403, 'queryEntities', { body: { ...ids(), kind: 'feature' }, key: readKey });

    for (const [kind, id] of [['robot', r0], ['feature', state.featureId], ['mission_template', state.missionId]] as const) {
      expect((await expectStatus(200, 'getEntity', { body: { ...ids(), kind, id } })).kind).toBe(kind);
    }
    expect((await expectStatus(200, 'getEntity', { body: { ...ids(), kind: 'operation' } })).kind).toBe('operation');
    await expectStatus(404, 'getEntity', { body: { ...ids(), kind: 'robot', id: randomUUID() } });
    await expectStatus(404, 'getEntity', { body: { ...ids(), kind: 'object', id: randomUUID() } });

    const resolved = await expectStatus(200, 'resolve', { body: { ...ids(), names: ['SIM0', 'nobody'] } });
    expect(resolved.items[0]).toMatchObject({ kind: 'robot', id: r0, match: 'case_insensitive' });
    expect(resolved.unmatched).toEqual(['nobody']);
    await expectStatus(400, 'resolve', { body: { ...ids(), names: [] } });

    const map = await expectStatus(200, 'getMapContext', { body: { ...ids(), include: ['robots', 'features'], bbox: [4, 51, 6, 53] } });
    expect(map.robots.find((r: Json) => r.robot_id === r0).latitude).toEqual(expect.any(Number));
    await expectStatus(400, 'getMapContext', { body: { ...ids(), include: [] } });
    await expectStatus(200, 'getMapContext', { body: { ...ids(), include: ['objects', 'field_rules'] } });

    const beep = await expectStatus(200, 'explainCapability', { body: { ...ids(), capability: 'beep' } });
    expect(beep.items[0].robots).toHaveLength(2);
    await expectStatus(400, 'explainCapability', { body: { ...ids(), capability: '' } });
  });

  it('user sessions and API-key management', async () => {
    await expectStatus(401, 'createSession', { key: null, body: { email: 'ops@acme.test', password: 'not the password' } });
    const login = await call('createSession', { key: null, body: { email: 'ops@acme.test', password: USER_PASSWORD } });
    expect(login.status).toBe(201);
    const session = { cookie: login.headers.get('set-cookie')!.split(';')[0]!, csrf: login.body.csrfToken as string };
    expect((await expectStatus(200, 'getCurrentSession', { session })).session.user.role).toBe('operator');
    await expectStatus(403, 'getCurrentSession');

    const idem = randomUUID();
    const created = await expectStatus(201, 'createApiKey', { session, body: { name: 'contract', permissions: ['robots:read'] }, idem });
    expect(created.secret).toMatch(/^fgk_/);
    expect((await expectStatus(200, 'createApiKey', { session, body: { name: 'contract', permissions: ['robots:read'] }, idem })).secretWithheld).toBe(true);
    await expectStatus(403, 'createApiKey', { session, body: { permissions: ['features:write'] }, idem: randomUUID() });
    await expectStatus(400, 'createApiKey', { session, body: { permissions: [] }, idem: randomUUID() });
    const keyId = created.key.apiKeyId as string;
    expect((await expectStatus(200, 'listApiKeys', { session })).items.length).toBeGreaterThanOrEqual(3);
    await expectStatus(403, 'listApiKeys');
    await expectStatus(200, 'getApiKey', { session, path: { api_key_id: keyId } });
    await expectStatus(404, 'getApiKey', { session, path: { api_key_id: randomUUID() } });
    await expectStatus(403, 'revokeApiKey', { session, path: { api_key_id: keyId }, csrf: false });
    expect((await expectStatus(200, 'revokeApiKey', { session, path: { api_key_id: keyId } })).state).toBe('revoked');

    await expectStatus(403, 'deleteCurrentSession', { session, csrf: false });
    await expectStatus(204, 'deleteCurrentSession', { session });
    await expectStatus(401, 'deleteCurrentSession', { session });
  });

  // ---- Issue 10 (branch objects): manifests, tracked objects, robot PATCH -------------------------
  it('organization admin: users, webhooks and the floor plan', async () => {
    const login = await call('createSession', { key: null, body: { email: 'admin@acme.test', password: USER_PASSWORD } });
    expect(login.status).toBe(201);
    const session = { cookie: login.headers.get('set-cookie')!.split(';')[0]!, csrf: login.body.csrfToken as string };
    // Users: an API key is not an admin session; a duplicate email conflicts.
    expect((await expectStatus(200, 'listUsers', { session })).items.length).toBeGreaterThanOrEqual(2);
    await expectStatus(403, 'listUsers');
    const created = await expectStatus(201, 'createUser', { session, body: { email: 'night@acme.test', role: 'viewer', password: USER_PASSWORD } });
    await expectStatus(409, 'createUser', { session, body: { email: 'night@acme.test', role: 'viewer', password: USER_PASSWORD } });
    await expectStatus(200, 'disableUser', { session, path: { user_id: created.userId } });
    await expectStatus(404, 'disableUser', { session, path: { user_id: randomUUID() } });
    await expectStatus(200, 'enableUser', { session, path: { user_id: created.userId } });
    await expectStatus(404, 'enableUser', { session, path: { user_id: randomUUID() } });
    // Webhooks: the signing secret once; an unknown webhook is 404; a bad URL names the field.
    const hook = await expectStatus(201, 'createWebhook', { session, body: { url: 'http://127.0.0.1:9/hook', format: 'fleetgw' }, idem: randomUUID() });
    expect(typeof hook.signingSecret).toBe('string');
    await expectStatus(400, 'createWebhook', { session, body: { url: 'not a url' }, idem: randomUUID() });
    expect((await expectStatus(200, 'listWebhooks', { session })).items.length).toBe(1);
    await expectStatus(403, 'listWebhooks', { key: readKey });
    expect((await expectStatus(200, 'listWebhookDeadLetters', { session })).items).toBeInstanceOf(Array);
    await expectStatus(403, 'listWebhookDeadLetters', { key: readKey });
    await expectStatus(204, 'removeWebhook', { session, path: { webhook_id: hook.webhook.webhookId } });
    await expectStatus(404, 'removeWebhook', { session, path: { webhook_id: hook.webhook.webhookId } });
    // The floor plan: none yet, an upload, its image, a placement, removal.
    expect((await expectStatus(200, 'getFloorPlan')).plan).toBeNull();
    await expectStatus(404, 'getFloorPlan', { path: { fleet_id: randomUUID() } });
    await expectStatus(404, 'getFloorPlanImage');
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="100" height="50"><rect width="100" height="50"/></svg>').toString('base64');
    await expectStatus(403, 'putFloorPlan', { body: { content_type: 'image/svg+xml', data_base64: svg } });
    const plan = await expectStatus(200, 'putFloorPlan', { session, body: { content_type: 'image/svg+xml', data_base64: svg } });
    expect(plan.contentType).toBe('image/svg+xml');
    expect((await call('getFloorPlanImage')).status).toBe(200);
    const points = [{ x: 0, y: 0, lat: 48.1, lon: 11.5 }, { x: 100, y: 0, lat: 48.1, lon: 11.501 }];
    expect((await expectStatus(200, 'putFloorPlanPlacement', { session, body: { points } })).placement).toHaveLength(2);
    await expectStatus(400, 'putFloorPlanPlacement', { session, body: { points: [points[0], points[0]] } });
    await expectStatus(204, 'deleteFloorPlan', { session });
    await expectStatus(404, 'deleteFloorPlan', { session });
  });

  it('organization and fleet manifests', async () => {
    const org = await expectStatus(200, 'getOrg');
    expect(org.fleets.map((f: Json) => f.fleetId)).toEqual([d.fleetId]);
    await expectStatus(403, 'getOrg', { path: { org_id: randomUUID() } });
    const fleet = await expectStatus(200, 'getFleet');
    expect(fleet.operation).toEqual({ operation_id: state.operationId, name: expect.any(String) });
    await expectStatus(404, 'getFleet', { path: { fleet_id: randomUUID() } });
  });

  it('tracked objects', async () => {
    const o = await expectStatus(201, 'createObject', { body: { objectClass: 'pallet', position: { latitude: 52, longitude: 5 }, geometry: SQUARE, label: 'bay 1' }, idem: randomUUID() });
    await expectStatus(400, 'createObject', { body: { objectClass: 'pallet', position: { latitude: 52 } } });
    const page = await expectStatus(200, 'listObjects', { query: { source: 'manual', class: 'pallet', limit: 1 } });
    expect(page.items[0].objectId).toBe(o.objectId);
    await expectStatus(400, 'listObjects', { query: { cursor: '1' } });
    await expectStatus(200, 'getObject', { path: { object_id: o.objectId as string } });
    await expectStatus(404, 'getObject', { path: { object_id: randomUUID() } });
    await expectStatus(200, 'updateObject', { path: { object_id: o.objectId as string }, body: { label: null, position: { latitude: 52.0001, longitude: 5, elevationM: 2 } } });
    await expectStatus(404, 'updateObject', { path: { object_id: randomUUID() }, body: { label: 'x' } });
    await expectStatus(403, 'deleteObject', { path: { object_id: o.objectId as string }, key: readKey });
    await expectStatus(204, 'deleteObject', { path: { object_id: o.objectId as string } });
    await expectStatus(404, 'deleteObject', { path: { object_id: o.objectId as string } });
  });

  it('robot metadata (PATCH /v1/robots/{robot_id})', async () => {
    const patched = await expectStatus(200, 'patchRobot', { path: { robot_id: inactiveRobot }, body: { name: 'spare 2', labels: { bay: '4' }, notes: 'contract' } });
    expect(patched).toMatchObject({ name: 'spare 2', labels: { bay: '4' }, notes: 'contract', active: false });
    await expectStatus(400, 'patchRobot', { path: { robot_id: inactiveRobot }, body: { colour: 'red' } });
    await expectStatus(404, 'patchRobot', { path: { robot_id: randomUUID() }, body: { name: 'x' } });
    await expectStatus(404, 'patchRobot', { path: { robot_id: inactiveRobot }, body: { fleet_id: randomUUID() } });
  });
  // ---- end of issue 10 (branch objects) -------------------------------------------------------------

  it('fleet-wide stop', async () => {
    const all = await expectStatus(200, 'fleetStopAll', { body: { reason: 'contract test', wait_for_ack: true } });
    expect(all.count).toBe(2);
    await expectStatus(403, 'fleetStopAll', { body: {}, key: readKey });
  });

  // Issue 10 parts 3, 5, 6 (branch health): faults, robot details, utilization.
  it('faults, robot details and utilization', async () => {
    // The spare robot reports one fault over the real robot link, then leaves again.
    const agent = new RobotAgent({ address: gw.ready.grpc, robotId: inactiveRobot, robotToken: inactiveToken, onCommand: () => ({ accept: true }), dedicatedConnection: true });
    agent.setHealth({ faults: [{ code: 'lidar_front_degraded', severity: HealthSeverity.WARNING, component: 'lidar_front', message: 'dust' }], devices: [] });
    agent.start();
    try {
      await until(async () => (await call('listFaults', { path: ids(), query: { active: true } })).body.items?.length > 0, 15_000, 'a fault');
      const page = await expectStatus(200, 'listFaults', { path: ids(), query: { robot_id: inactiveRobot, limit: 1 } });
      await expectStatus(400, 'listFaults', { path: ids(), query: { active: 'maybe' } });
      const fault = await expectStatus(200, 'getFault', { path: { ...ids(), fault_id: page.items[0].faultId as string } });
      expect(fault.code).toBe('lidar_front_degraded');
      await expectStatus(404, 'getFault', { path: { ...ids(), fault_id: randomUUID() } });
      await expectStatus(200, 'listRobotFaults', { path: { robot_id: inactiveRobot }, query: { active: true } });
      await expectStatus(404, 'listRobotFaults', { path: { robot_id: randomUUID() } });
      const details = await expectStatus(200, 'getRobotDetails', robotPath());
      expect(details.health.devices.length).toBeGreaterThan(0);
      await expectStatus(200, 'getRobotDetails', { path: { robot_id: inactiveRobot }, key: readKey });
      await expectStatus(404, 'getRobotDetails', { path: { robot_id: randomUUID() } });
    } finally {
      await agent.stop();
    }
    const now = Date.now();
    const u = await expectStatus(200, 'getUtilization', { path: ids(), query: { from_ms: now - 60_000, to_ms: now } });
    expect(u.robots).toHaveLength(3);
    await expectStatus(400, 'getUtilization', { path: ids(), query: { from_ms: now, to_ms: now - 1 } });
    await expectStatus(403, 'getUtilization', { path: ids(), query: { from_ms: now - 60_000, to_ms: now }, key: readKey });
    // Issue 13 part 1: one robot's telemetry history (docs/telemetry-history.md; test/e2e/telemetry-history.test.ts in depth).
    const hist = { from_ms: now - 120_000, to_ms: now };
    // A small depot's rows reach the store up to FLEETGW_TELEMETRY_INSERT_SMALL_MAX_AGE_MS (5 s) after
    // they arrive, so the history lags the live view by that much: wait until 5 samples are readable.
    await until(async () => (await call('listTelemetrySamples', { ...robotPath(), query: { ...hist, limit: 5 } })).body.items?.length === 5, 15_000, '5 stored samples');
    const samples = await expectStatus(200, 'listTelemetrySamples', { ...robotPath(), query: { ...hist, limit: 5 } });
    expect(samples.items).toHaveLength(5);
    await expectStatus(200, 'listTelemetrySamples', { ...robotPath(), query: { ...hist, limit: 5, cursor: samples.next_cursor as string }, key: readKey });
    await expectStatus(400, 'listTelemetrySamples', { ...robotPath(), query: { ...hist, limit: 10_001 } });
    await expectStatus(404, 'listTelemetrySamples', { path: { robot_id: randomUUID() } });
    const series = await expectStatus(200, 'getTelemetrySeries', { ...robotPath(), query: { ...hist, max_points: 10, fields: 'speedMps,batteryPct' } });
    expect(series.points.length).toBeGreaterThan(0);
    await expectStatus(400, 'getTelemetrySeries', { ...robotPath(), query: { from_ms: now - 25 * 3_600_000, to_ms: now } });
    const path = await expectStatus(200, 'getTelemetryPath', { ...robotPath(), query: hist });
    expect(path.geometry.coordinates.length).toBeGreaterThan(1);
    await expectStatus(400, 'getTelemetryPath', { ...robotPath(), query: { ...hist, max_points: 5001 } });
    const mcap = await expectStatus(200, 'exportTelemetryMcap', { ...robotPath(), query: { from_ms: now - 5_000, to_ms: now } });
    expect(Buffer.from(mcap as Uint8Array).subarray(1, 5).toString('latin1')).toBe('MCAP');
    await expectStatus(404, 'exportTelemetryMcap', { path: { robot_id: randomUUID() } });
  });
  // ---- Issue 10 part 4 and part 9 (alerts: fleet:read lists and reads, fleet:write acknowledges) ----
  it('alerts', async () => {
    let items: Json[] = [];
    await until(async () => {
      items = ((await call('listAlerts', { query: { kind: 'battery_low' } })).body as { items: Json[] }).items;
      return items.length === 2;
    }, 20_000, 'a battery_low alert per simulated robot');
    const first = await expectStatus(200, 'listAlerts', { query: { state: 'open', limit: 1 } });
    expect(first.items).toHaveLength(1);
    const rest = await expectStatus(200, 'listAlerts', { query: { state: 'open', limit: 1, cursor: first.next_cursor as string } });
    expect(rest.items[0].alertId).not.toBe(first.items[0].alertId);
    // A cursor is bound to its filters.
    await expectStatus(400, 'listAlerts', { query: { state: 'acknowledged', cursor: first.next_cursor as string } });
    await expectStatus(400, 'listAlerts', { query: { state: 'closed' } });
    expect((await expectStatus(200, 'listAlerts', { query: { robot_id: robots[0]!.robotId, kind: 'battery_low' } })).items).toHaveLength(1);
    await expectStatus(404, 'listAlerts', { path: { fleet_id: randomUUID() } });
    const alertId = items[0]!.alertId as string;
    expect((await expectStatus(200, 'getAlert', { path: { alert_id: alertId } })).kind).toBe('battery_low');
    await expectStatus(404, 'getAlert', { path: { alert_id: randomUUID() } });
    await expectStatus(403, 'acknowledgeAlert', { path: { alert_id: alertId }, body: {}, key: readKey });
    await expectStatus(404, 'acknowledgeAlert', { path: { alert_id: randomUUID() }, body: {} });
    const acked = await expectStatus(200, 'acknowledgeAlert', { path: { alert_id: alertId }, body: { note: 'charging it' } });
    expect(acked).toMatchObject({ state: 'acknowledged', acknowledgedBy: { apiKeyId: d.apiKeyId }, acknowledgeNote: 'charging it' });
  });
  // ---- end of issue 10 part 4 ----
  // Issue 11 part 4: the Agent API over MCP (docs/mcp.md; test/e2e/mcp.test.ts drives it with the SDK client).
  it('the MCP endpoint', async () => {
    const init = await call('mcpMessage', { body: { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'contract', version: '1' } } } });
    expect(init.status).toBe(200);
    expect(init.body.result.serverInfo.name).toBe('fleet-gateway');
    const session = { 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-06-18' };
    await expectStatus(202, 'mcpMessage', { headers: session, body: { jsonrpc: '2.0', method: 'notifications/initialized' } });
    const listed = await expectStatus(200, 'mcpMessage', { headers: session, body: { jsonrpc: '2.0', id: 2, method: 'tools/list' } });
    expect(listed.result.tools.map((t: Json) => t.name)).toContain('control-robot');
    const status = await expectStatus(200, 'mcpMessage', { headers: session, body: { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'get-runtime-status', arguments: ids() } } });
    expect(status.result.structuredContent.kind).toBe('fleet');
    await expectStatus(400, 'mcpMessage', { body: { jsonrpc: '2.0', id: 4, method: 'tools/list' } });
    await expectStatus(401, 'mcpMessage', { key: null, body: { jsonrpc: '2.0', id: 5, method: 'tools/list' } });
    await expectStatus(404, 'mcpMessage', { headers: { 'mcp-session-id': randomUUID() }, body: { jsonrpc: '2.0', id: 6, method: 'tools/list' } });
    await expectStatus(204, 'mcpCloseSession', { headers: session });
    await expectStatus(404, 'mcpCloseSession', { headers: session });
  });

  it('returned only errors each operation publishes (x-errors)', () => {
    expect(unpublished).toEqual([]);
  });

  it('covered every operation of /openapi.json with a success and an error', () => {
    const missing: string[] = [];
    for (const id of operations.keys()) {
      const statuses = [...(seen.get(id) ?? [])];
      if (!statuses.some((s) => s < 300)) missing.push(`${id}: no success`);
      if (!statuses.some((s) => s >= 400)) missing.push(`${id}: no error`);
    }
    expect(missing).toEqual([]);
  });
});
