/**
 * Every robot command is one declaration (src/commands/catalog) and reaches each surface it names:
 * its proto case, the control-robot action enum and fields (/openapi.json and the MCP tool),
 * schedule-command (schema, tool and the scheduler's argument mapping), its nested route and its
 * config-style exchange. Checked against what `fleetgw serve` (dist: `npm run build` first)
 * publishes at /openapi.json and in its MCP tools/list, so a declaration a surface forgot fails here.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bodyName, COMMAND_ACTIONS, DECLARATIONS, inPublishedOrder } from '../../src/commands/catalog/index.js';
import { toWire } from '../../src/commands/wire.js';
import type { CommandRecord } from '../../src/commands/types.js';
import { makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { argsOf, SCHEDULABLE_ACTIONS } from '../../src/missions/scheduling/command-fires.js';
import { CommandSchema } from '../../src/gen/fleetgw/v1/robot_link_pb.js';
import { SIM_CAPABILITIES } from '../../src/sim/commands.js';
// @ts-expect-error: a plain .mjs build script without type declarations
import * as derived from '../../scripts/derived-files.mjs';

type CatalogFile = { file: string; source: string };
const catalogListSource = derived.catalogListSource as (files: CatalogFile[]) => string;
const catalogFiles = derived.catalogFiles as (root: string) => CatalogFile[];
const ROOT = new URL('../..', import.meta.url).pathname;

type Json = Record<string, any>;

let gw: RunningGateway;
let client: Client;
let built: { routes: string[]; doc: Json; tools: { name: string; inputSchema: Json }[] };

beforeAll(async () => {
  const d = makeDataDir('fleetgw-command-catalog-');
  gw = await startGatewayProcess(d.dataDir);
  const base = gw.ready.http;
  const doc = (await (await fetch(`${base}/openapi.json`)).json()) as Json;
  const routes = Object.entries(doc.paths as Json).flatMap(([path, item]) => Object.keys(item as Json).map((m) => `${m.toUpperCase()} ${path}`));
  client = new Client({ name: 'command-catalog-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${d.apiKey}` } } }));
  const tools = (await client.listTools()).tools.map((t) => ({ name: t.name, inputSchema: t.inputSchema }));
  built = { routes, doc, tools };
}, 60_000);

afterAll(async () => {
  await client?.close();
  await gw?.stop();
});

const deref = (doc: Json, node: Json): Json => (typeof node.$ref === 'string' ? node.$ref.slice(2).split('/').reduce((n: Json, k: string) => n[k], doc) : node);
const bodyOf = (doc: Json, path: string): Json => deref(doc, doc.paths[path].post.requestBody.content['application/json'].schema);
const toolInput = (tools: { name: string; inputSchema: Json }[], name: string): Json => tools.find((t) => t.name === name)!.inputSchema;

describe('the command catalog', () => {
  it('declares each action once, on a proto Command case, in COMMAND_ACTIONS order', () => {
    const cases = new Set(CommandSchema.oneofs.find((o) => o.name === 'action')!.fields.map((f) => f.localName));
    expect(DECLARATIONS.map((d) => d.action)).toEqual(COMMAND_ACTIONS);
    expect(new Set(COMMAND_ACTIONS).size).toBe(COMMAND_ACTIONS.length);
    for (const d of DECLARATIONS) expect(cases, d.action).toContain(d.wire.case);
    // Every proto case has its declaration: a case added to the proto without one is caught here.
    expect([...cases].sort()).toEqual(DECLARATIONS.map((d) => d.wire.case).sort());
  });

  it('offers every controlRobot command on control-robot: REST schema, /openapi.json and the MCP tool, with its fields', () => {
    const { doc, tools } = built;
    const rest = bodyOf(doc, '/v1/agent/control-robot');
    const tool = toolInput(tools, 'control-robot');
    for (const d of DECLARATIONS.filter((x) => x.controlRobot)) {
      const verbs = [d.action, ...(d.controlRobot?.fleetWide !== undefined ? [d.controlRobot.fleetWide] : [])];
      for (const v of verbs) {
        expect(rest.properties.action.enum, v).toContain(v);
        expect(tool.properties.action.enum, v).toContain(v);
      }
      for (const f of Object.keys(d.fields.properties as Json)) {
        expect(rest.properties, `${d.action}.${f}`).toHaveProperty(bodyName(f));
        expect(tool.properties, `${d.action}.${f}`).toHaveProperty(bodyName(f));
      }
    }
    const offered = DECLARATIONS.filter((x) => x.controlRobot).length + DECLARATIONS.filter((x) => x.controlRobot?.fleetWide).length;
    expect(rest.properties.action.enum).toHaveLength(offered);
  });

  it('lets schedule-command and the scheduler take every schedule command', () => {
    const { doc, tools } = built;
    const rest = deref(doc, bodyOf(doc, '/v1/agent/schedule-command').properties.command);
    const tool = toolInput(tools, 'schedule-command').properties.command;
    const schedulable = DECLARATIONS.filter((x) => x.schedule).map((d) => d.action);
    expect([...SCHEDULABLE_ACTIONS].sort()).toEqual([...schedulable].sort());
    expect([...rest.properties.action.enum].sort()).toEqual([...schedulable].sort());
    expect([...tool.properties.action.enum].sort()).toEqual([...schedulable].sort());
    for (const d of DECLARATIONS.filter((x) => x.schedule)) {
      for (const f of Object.keys(d.fields.properties as Json)) expect(rest.properties, `${d.action}.${f}`).toHaveProperty(bodyName(f));
    }
    // The scheduler turns a stored schedule into the command's arguments with the declaration.
    expect(argsOf({ action: 'stop' })).toEqual({ action: 'stop', args: { reason: 'scheduled stop' } });
    expect(argsOf({ action: 'invoke_action', actionName: 'beep' })).toEqual({ action: 'invoke_action', args: { name: 'beep', arguments: {} } });
    expect(argsOf({ action: 'mode', mode: 'manual' })).toEqual({ action: 'mode', args: { mode: 'manual' } });
  });

  it('serves and documents a nested route for every route command, and GET+POST for every exchange', () => {
    const { doc, routes } = built;
    const base = '/v1/orgs/{org_id}/fleets/{fleet_id}/robots/{robot_id}';
    for (const d of DECLARATIONS) {
      if (d.route) {
        const path = `${base}/${d.route.segment}`;
        expect(routes, d.action).toContain(`POST ${path}`);
        expect(doc.paths[path].post.operationId).toBe(d.route.operationId);
        const body = bodyOf(doc, path);
        for (const f of Object.keys(d.fields.properties as Json)) expect(body.properties, `${d.action}.${f}`).toHaveProperty(bodyName(f));
      }
      if (d.exchange) {
        const path = `${base}/${d.exchange.segment}`;
        expect(routes, d.action).toEqual(expect.arrayContaining([`GET ${path}`, `POST ${path}`]));
        expect(doc.paths[path].get.operationId).toBe(d.exchange.readOperationId);
        expect(doc.paths[path].post.operationId).toBe(d.exchange.updateOperationId);
      }
    }
  });

  it('puts each command on the wire as its declared case', () => {
    const rec = (action: string, args: unknown): CommandRecord => ({
      commandId: '00000000-0000-7000-8000-000000000001', robotId: 'r', fleetId: 'f', orgId: 'o', action, args, argsDigest: '', seq: 7,
      requestedBy: { actorType: 'schedule', scheduleId: 's' }, createdAtMs: 1, state: 'dispatched', rejectReason: null, history: [],
      attempts: 0, lastSentAtMs: null, retryBudgetExhausted: false, result: null,
    } as unknown as CommandRecord);
    expect(toWire(rec('mode', { mode: 'manual' })).action).toEqual({ case: 'setMode', value: expect.objectContaining({ mode: 'manual' }) });
    const goTo = toWire(rec('go_to', { latitude: 52, longitude: 5, headingDeg: null, maxSpeedMps: 1.5 })).action;
    expect(goTo.case).toBe('goTo');
    expect(goTo.value).toEqual(expect.objectContaining({ latitude: 52, longitude: 5, hasHeading: false, headingDeg: 0, maxSpeedMps: 1.5 }));
  });
});

describe('adding a command', () => {
  const horn: CatalogFile = { file: 'horn.ts', source: "import { declareCommand } from './declaration.js';\n\nexport const horn = declareCommand({\n  action: 'horn',\n" };

  it('is one new file: `npm run gen` lists every declaration of the folder in declared.ts, and a new one with them', () => {
    const files = catalogFiles(ROOT);
    expect(readFileSync(join(ROOT, 'src/commands/catalog/declared.ts'), 'utf8')).toBe(catalogListSource(files));
    const withHorn = catalogListSource([...files, horn]);
    expect(withHorn).toContain("import { horn } from './horn.js';");
    expect(withHorn).toMatch(/export const DECLARED = \[[^\]]*\bhorn\b[^\]]*\] as const;/);
    // Files that declare no command (the shape, shared schema parts, the index) are not listed.
    expect(catalogListSource(files)).not.toMatch(/declaration\.js|schema-parts\.js|index\.js/);
  });

  it('keeps the published order of the actions, a new one after them', () => {
    const published = ['stop', 'start', 'release', 'force_reset', 'mode', 'invoke_action', 'update_settings', 'go_to', 'config', 'onboard_settings', 'mission_start', 'mission_control'];
    expect(COMMAND_ACTIONS.slice(0, published.length)).toEqual(published);
    expect(inPublishedOrder(['config', 'horn', 'stop'], ['stop', 'config'])).toEqual(['stop', 'config', 'horn']);
  });

  it('is advertised by the simulated robots from their one handler table (the direct actions, as before)', () => {
    const direct = ['stop', 'start', 'release', 'force_reset', 'mode', 'invoke_action', 'update_settings', 'go_to', 'config', 'onboard_settings'];
    expect(SIM_CAPABILITIES.slice(0, direct.length)).toEqual(direct);
    for (const c of SIM_CAPABILITIES) expect(COMMAND_ACTIONS, c).toContain(c);
  });
});
