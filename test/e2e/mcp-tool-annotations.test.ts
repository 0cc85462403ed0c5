/**
 * What `tools/list` tells an agent about each tool (docs/mcp.md, Tools), read by the SDK's own
 * client from the real `fleetgw serve`: a short title, annotations that say which tools change state
 * (an agent client skips its confirmation on `readOnlyHint`), and an output schema that the actual
 * results validate against (checked with ajv here, besides the SDK client's own check).
 */
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminJson } from '../support/cli.js';
import { makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/** Tools that only read: the only ones an agent may call without asking. */
const READ_TOOLS = new Set(['get-runtime-status', 'query-entities', 'get-entity', 'resolve', 'get-map-context', 'explain-capability']);
/** Tools that stop, abort, cancel, reset, delete or overwrite: a client should confirm each call. */
const DESTRUCTIVE_TOOLS = ['control-robot', 'control-operation', 'control-mission', 'control-feature', 'cancel-schedule', 'edit-schedule', 'upsert-field-rule'];

let d: ReturnType<typeof makeDataDir>;
let gw: RunningGateway | undefined;
let client: Client;
let readClient: Client;
let tools: Tool[];
let robotId: string;

async function connect(key: string): Promise<Client> {
  const c = new Client({ name: 'mcp-annotations-e2e', version: '1.0.0' });
  await c.connect(new StreamableHTTPClientTransport(new URL(`${gw!.ready.http}/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return c;
}

beforeAll(async () => {
  d = makeDataDir('fleetgw-mcp-annotations-');
  robotId = adminJson<{ robotId: string }>(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'r1']).robotId;
  const readKey = adminJson<{ apiKey: string }>(['create-key', '--data-dir', d.dataDir, '--org', d.orgId, '--permissions', 'robots:read']).apiKey;
  gw = await startGatewayProcess(d.dataDir);
  client = await connect(d.apiKey);
  readClient = await connect(readKey);
  tools = (await client.listTools()).tools;
}, 120_000);

afterAll(async () => {
  await client?.close().catch(() => undefined);
  await readClient?.close().catch(() => undefined);
  await gw?.stop();
  if (d) rmSync(d.dataDir, { recursive: true, force: true });
});

describe('tools/list as an agent sees it', () => {
  it('reports its size', async () => {
    // The raw JSON-RPC answer, as a client reads it into its context.
    const init = await fetch(`${gw!.ready.http}/v1/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${d.apiKey}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'size', version: '1' } } }),
    });
    const session = init.headers.get('mcp-session-id')!;
    const list = await fetch(`${gw!.ready.http}/v1/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${d.apiKey}`, 'content-type': 'application/json', 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    const text = await list.text();
    const listed = (JSON.parse(text) as { result: { tools: Tool[] } }).result.tools;
    // What most clients hand the model: name, description and input schema (not the output schema).
    const forModel = JSON.stringify(listed.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })));
    const output = JSON.stringify(listed.map((t) => t.outputSchema ?? null));
    process.stdout.write(`tools/list: ${listed.length} tools, ${Buffer.byteLength(text)} bytes; name+description+inputSchema ${Buffer.byteLength(forModel)} bytes; outputSchemas ${Buffer.byteLength(output)} bytes\n`);
    expect(listed.length).toBe(tools.length);
  });

  it('gives every tool a short title', () => {
    for (const t of tools) {
      expect(t.title, t.name).toBeTruthy();
      expect(t.title!.length, t.name).toBeLessThanOrEqual(40);
    }
  });

  it('marks only reading tools read-only, and the ones that stop, abort, cancel, reset or overwrite destructive', () => {
    expect(tools.length).toBeGreaterThanOrEqual(18);
    for (const t of tools) {
      const a = t.annotations ?? {};
      expect(typeof a.readOnlyHint, t.name).toBe('boolean');
      expect(a.readOnlyHint, `${t.name}: readOnlyHint`).toBe(READ_TOOLS.has(t.name));
      if (a.readOnlyHint !== true) {
        expect(typeof a.destructiveHint, t.name).toBe('boolean');
        expect(typeof a.idempotentHint, t.name).toBe('boolean');
      }
    }
    const byName = new Map(tools.map((t) => [t.name, t.annotations ?? {}]));
    for (const name of DESTRUCTIVE_TOOLS) expect(byName.get(name)?.destructiveHint, name).toBe(true);
    // The two that were published read-only though they pause, abort, assign and cancel.
    expect(byName.get('control-operation')?.readOnlyHint).toBe(false);
    expect(byName.get('cancel-schedule')?.readOnlyHint).toBe(false);
    // Idempotent where a retry is harmless: a required Idempotency-Key replays; a robot command does not.
    expect(byName.get('schedule-command')).toMatchObject({ idempotentHint: true, destructiveHint: false });
    expect(byName.get('cancel-schedule')?.idempotentHint).toBe(true);
    expect(byName.get('control-robot')?.idempotentHint).toBe(false);
  });

  it('gives every tool an output schema that its actual results, successes and errors, validate against', async () => {
    const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
    for (const t of tools) {
      expect(t.outputSchema?.type, t.name).toBe('object');
      ajv.compile(t.outputSchema!);
    }
    const ids = { org_id: d.orgId, fleet_id: d.fleetId };
    const later = Date.now() + 3_600_000;
    const calls: { c: Client; name: string; args: Record<string, unknown>; error?: boolean }[] = [
      { c: client, name: 'get-runtime-status', args: ids },
      { c: client, name: 'get-runtime-status', args: { ...ids, robot_id: robotId } },
      { c: client, name: 'query-entities', args: { ...ids, kind: 'robot' } },
      { c: client, name: 'get-entity', args: { ...ids, kind: 'robot', id: robotId } },
      { c: client, name: 'resolve', args: { ...ids, names: ['r1', 'nobody'] } },
      { c: client, name: 'get-map-context', args: { ...ids, include: ['robots', 'features'] } },
      { c: client, name: 'explain-capability', args: ids },
      { c: client, name: 'schedule-command', args: { ...ids, command: { action: 'stop', robot_ids: [robotId], reason: 'night' }, schedule: { timezone: 'UTC', startTimeMs: later, kind: 'once' }, idempotency_key: randomUUID() } },
      { c: client, name: 'control-robot', args: { ...ids, action: 'stop', robot_id: robotId } },
      { c: readClient, name: 'control-operation', args: { ...ids, action: 'pause' }, error: true },
      { c: client, name: 'control-robot', args: { ...ids, action: 'stop', robot_id: 'not-a-uuid' }, error: true },
    ];
    let scheduleId: string | undefined;
    for (const call of calls) {
      // The SDK client validates structuredContent against the listed outputSchema itself and throws on a mismatch.
      const r = (await call.c.callTool({ name: call.name, arguments: call.args })) as CallToolResult;
      const what = `${call.name} ${JSON.stringify(r.structuredContent)}`;
      expect(r.structuredContent, what).toBeDefined();
      if (call.error === true) expect(r.isError, what).toBe(true);
      else if (call.name !== 'control-robot') expect(r.isError, what).toBeFalsy();
      const validate = ajv.compile(tools.find((t) => t.name === call.name)!.outputSchema!);
      expect(validate(r.structuredContent), `${what}: ${ajv.errorsText(validate.errors)}`).toBe(true);
      if (call.name === 'schedule-command') scheduleId = (r.structuredContent as { scheduleId: string }).scheduleId;
    }
    const cancel = (await client.callTool({ name: 'cancel-schedule', arguments: { ...ids, schedule_id: scheduleId } })) as CallToolResult;
    expect(cancel.isError, JSON.stringify(cancel)).toBeFalsy();
    const validate = ajv.compile(tools.find((t) => t.name === 'cancel-schedule')!.outputSchema!);
    expect(validate(cancel.structuredContent), ajv.errorsText(validate.errors)).toBe(true);
  }, 120_000);
});
