/**
 * Alert webhooks through the real `fleetgw serve` process (dist: `npm run build` first), with a local
 * HTTP receiver on loopback:
 *
 * - a webhook made over REST whose receiver fails (500) three times and then recovers gets the e-stop
 *   alert after retries, signed: the signature verifies with the secret shown once at creation, the
 *   timestamp is current, every attempt carries the same delivery id;
 * - a webhook made with `fleetgw admin webhooks add` whose receiver stays down is dead-lettered after
 *   its max attempts; the dead letter is readable over REST and from the CLI;
 * - listings show the URL's origin only, never the secret, and the gateway's log holds neither the
 *   secret nor the URL's path (which, as with Slack, can be a token);
 * - the delivery outcomes are on /metrics, every outcome present.
 */
import { readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { verifyDelivery } from '../../src/webhooks/signing.js';
import { adminJson, fleetgw } from '../support/cli.js';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { startSim } from '../support/stream-client.js';
import { until } from '../support/until.js';

interface Received {
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
  answered: number;
}

const dirs: string[] = [];
const running: { gw: RunningGateway[]; procs: ChildProcess[]; servers: Server[] } = { gw: [], procs: [], servers: [] };

afterEach(async () => {
  for (const p of running.procs.splice(0)) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  for (const g of running.gw.splice(0)) await g.stop('SIGKILL');
  for (const s of running.servers.splice(0)) await new Promise((r) => s.close(r));
});

afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A receiver: `failFirst(path)` requests to a path answer 500, later ones 200 (Infinity: always 500). */
async function receiver(failFirst: (path: string) => number): Promise<{ base: string; got: Received[] }> {
  const got: Received[] = [];
  const seen = new Map<string, number>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '';
      const n = (seen.get(path) ?? 0) + 1;
      seen.set(path, n);
      const answered = n <= failFirst(path) ? 500 : 200;
      got.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), answered });
      res.writeHead(answered, { 'content-type': 'text/plain' }).end(answered === 200 ? 'ok' : 'down');
    });
  });
  running.servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, got };
}

describe('alert webhooks through the real process', () => {
  it('retries until the receiver recovers, signs every delivery, dead-letters when it stays down, keeps secrets out of listings and logs', async () => {
    const d = makeDataDir('fleetgw-webhooks-');
    dirs.push(d.dataDir);
    const robot = adminJson<{ robotId: string; robotToken: string }>(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'r0']);
    const recv = await receiver((path) => (path.startsWith('/down/') ? Infinity : 3));
    const gw = await startGatewayProcess(d.dataDir);
    running.gw.push(gw);
    const hooks = `/v1/orgs/${d.orgId}/webhooks`;

    // Over REST: retried quickly, up to 10 attempts. The path stands for a token (as in a Slack URL).
    const upPath = '/up/T0001/B0001/upsecretpathtoken';
    const create = (body: Record<string, unknown>, key = 'create-up') =>
      api(gw.ready.http, d.apiKey, hooks, { method: 'POST', headers: { 'idempotency-key': key }, body: JSON.stringify(body) });
    const created = await create({ url: `${recv.base}${upPath}`, name: 'ops', kinds: ['estop'], max_attempts: 10, initial_backoff_ms: 50, timeout_ms: 2000 });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const secret = created.body.signingSecret as string;
    expect(secret).toMatch(/^whsec_/);
    expect(created.body.webhook).toMatchObject({ urlOrigin: recv.base, format: 'fleetgw', kinds: ['estop'], maxAttempts: 10 });
    // A replay of the create answers the webhook without the secret.
    const replay = await create({ url: `${recv.base}${upPath}`, name: 'ops', kinds: ['estop'], max_attempts: 10, initial_backoff_ms: 50, timeout_ms: 2000 });
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual({ webhook: created.body.webhook, secretWithheld: true });
    // Clear errors naming the field.
    const bad = await create({ url: 'http://example.com/x' }, 'bad-1');
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('url: plain http is accepted only for loopback receivers');
    // A fleet-bound key is not an organization admin.
    const fleetKey = adminJson<{ apiKey: string }>(['create-key', '--data-dir', d.dataDir, '--org', d.orgId, '--fleet', d.fleetId, '--permissions', 'fleet:read,fleet:write']).apiKey;
    expect((await api(gw.ready.http, fleetKey, hooks)).status).toBe(403);

    // From the CLI (the running gateway sees it on its next alert): the receiver stays down; 2 attempts.
    const downPath = '/down/T0002/B0002/downsecretpathtoken';
    const cli = adminJson<{ webhook: { webhookId: string; urlOrigin: string }; signingSecret: string }>(['webhooks', 'add', '--data-dir', d.dataDir, '--org', d.orgId, '--url', `${recv.base}${downPath}`,
      '--kinds', 'estop', '--max-attempts', '2', '--initial-backoff-ms', '20', '--timeout-ms', '2000']);
    expect(cli.webhook.urlOrigin).toBe(recv.base);

    // A real alert: the robot's e-stop button.
    const sim = await startSim(d.dataDir, gw.ready.grpc, [robot], 10);
    running.procs.push(sim);
    await until(async () => (await api(gw.ready.http, d.apiKey, `/v1/robots/${robot.robotId}`)).body.online === true, 20_000, 'robot online');
    sim.kill('SIGUSR1');

    await until(() => recv.got.some((r) => r.path === upPath && r.answered === 200), 30_000, 'a delivery accepted by the recovered receiver');
    const up = recv.got.filter((r) => r.path === upPath);
    expect(up.map((r) => r.answered)).toEqual([500, 500, 500, 200]);
    const ok = up[3]!;
    const body = JSON.parse(ok.body) as { type: string; deliveryId: string; alert: { kind: string; robotId: string; state: string } };
    expect(body).toMatchObject({ type: 'alert.opened', alert: { kind: 'estop', robotId: robot.robotId, state: 'open' } });
    const ts = Number(ok.headers['x-fleetgw-timestamp']);
    expect(verifyDelivery(secret, String(ok.headers['x-fleetgw-signature']), ts, ok.body, Math.floor(Date.now() / 1000))).toBe(true);
    expect(verifyDelivery(secret, String(ok.headers['x-fleetgw-signature']), ts, `${ok.body} `, Math.floor(Date.now() / 1000))).toBe(false);
    expect(verifyDelivery('whsec_other', String(ok.headers['x-fleetgw-signature']), ts, ok.body, Math.floor(Date.now() / 1000))).toBe(false);
    // One delivery, four attempts: the same id every time.
    expect(new Set(up.map((r) => r.headers['x-fleetgw-delivery-id'])).size).toBe(1);
    expect(ok.headers['x-fleetgw-delivery-id']).toBe(body.deliveryId);

    // The receiver that stays down: two attempts, then a dead letter, readable over REST.
    const deadLetters = `/v1/orgs/${d.orgId}/webhook-dead-letters`;
    await until(async () => (await api(gw.ready.http, d.apiKey, deadLetters)).body.items?.length === 1, 30_000, 'the dead letter');
    const dead = (await api(gw.ready.http, d.apiKey, deadLetters)).body.items[0];
    expect(dead).toMatchObject({ webhookId: cli.webhook.webhookId, urlOrigin: recv.base, alertKind: 'estop', change: 'opened', reason: 'attempts_exhausted', attempts: 2, lastError: 'HTTP 500' });
    expect(JSON.parse(dead.body as string)).toMatchObject({ type: 'alert.opened', alert: { kind: 'estop' } });
    expect(recv.got.filter((r) => r.path === downPath)).toHaveLength(2);
    // The CLI reads the same list.
    const cliDead = adminJson<{ deadLetters: { webhookId: string; reason: string }[] }>(['webhooks', 'dead-letters', '--data-dir', d.dataDir, '--org', d.orgId]);
    expect(cliDead.deadLetters.map((x) => [x.webhookId, x.reason])).toEqual([[cli.webhook.webhookId, 'attempts_exhausted']]);

    // Metrics: every outcome published.
    const token = readFileSync(join(d.dataDir, 'metrics-token'), 'utf8').trim();
    // A fresh connection: the CLI runs above block this process, and a pooled keep-alive socket may be stale by now.
    const metrics = await (await fetch(`${gw.ready.http}/metrics`, { headers: { authorization: `Bearer ${token}`, connection: 'close' } })).text();
    for (const [outcome, atLeast] of [['delivered', 1], ['retried', 4], ['dead_lettered', 1], ['queue_full', 0], ['webhook_removed', 0]] as const) {
      const m = new RegExp(`^fleetgw_webhook_deliveries_total\\{outcome="${outcome}"\\} (\\d+)`, 'm').exec(metrics);
      expect(m, outcome).not.toBeNull();
      expect(Number(m![1])).toBeGreaterThanOrEqual(atLeast);
    }

    // Listings: origins only, no secret.
    const listed = await api(gw.ready.http, d.apiKey, hooks);
    expect(listed.status).toBe(200);
    expect(listed.body.items).toHaveLength(2);
    const listedText = JSON.stringify(listed.body) + fleetgw(['admin', 'webhooks', 'list', '--data-dir', d.dataDir, '--org', d.orgId, '--json']).stdout;
    for (const s of [secret, cli.signingSecret, 'secretpathtoken']) expect(listedText).not.toContain(s);

    // Removing a webhook: REST for one, CLI for the other.
    expect((await api(gw.ready.http, d.apiKey, `${hooks}/${created.body.webhook.webhookId}`, { method: 'DELETE' })).status).toBe(204);
    expect((await api(gw.ready.http, d.apiKey, `${hooks}/${created.body.webhook.webhookId}`, { method: 'DELETE' })).status).toBe(404);
    expect(fleetgw(['admin', 'webhooks', 'remove', '--data-dir', d.dataDir, '--org', d.orgId, '--webhook-id', cli.webhook.webhookId]).status).toBe(0);
    expect((await api(gw.ready.http, d.apiKey, hooks)).body.items).toHaveLength(0);

    expect(await gw.stop('SIGTERM')).toBe(0);
    running.gw.splice(running.gw.indexOf(gw), 1);
    const log = gw.stderr();
    expect(log).toContain('webhook delivery dead-lettered');
    for (const s of [secret, cli.signingSecret, 'secretpathtoken']) expect(log).not.toContain(s);
  }, 120_000);
});
