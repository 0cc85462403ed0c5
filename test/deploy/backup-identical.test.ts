/**
 * `fleetgw admin backup` holds everything a gateway needs to be the same gateway: restored into an
 * empty data dir and served, REST answers the same, the same metrics token opens /metrics (Prometheus
 * keeps scraping), the same certificate is presented (robots and clients that pinned it keep
 * connecting), and the same robot token logs a robot in. `--no-tls` leaves the TLS pair out. Real
 * processes, the gateway as deployed (HTTPS with its self-signed pair).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { RobotAgent } from '../../src/agent/index.js';
import { adminJson, fleetgw } from '../support/cli.js';
import { makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { httpsGet } from '../support/https.js';
import { testSample } from '../support/samples.js';
import { until } from '../support/until.js';

const work = mkdtempSync(join(tmpdir(), 'fleetgw-backup-same-'));
const d = makeDataDir('fleetgw-backup-same-src-');
const running: RunningGateway[] = [];
afterAll(async () => {
  for (const gw of running) await gw.stop('SIGKILL');
  rmSync(work, { recursive: true, force: true });
  rmSync(d.dataDir, { recursive: true, force: true });
});

/** What a client, Prometheus and a robot see of a gateway on `dataDir`. */
async function observe(gw: RunningGateway, dataDir: string, robot: { robotId: string; robotToken: string }, metricsToken: string): Promise<{ views: Record<string, unknown>; fingerprint: string; metricsStatus: number }> {
  const ca = readFileSync(join(dataDir, 'tls', 'cert.pem'));
  const views: Record<string, unknown> = {};
  let fingerprint = '';
  for (const path of ['/v1/me', `/v1/robots?fleet_id=${d.fleetId}`, `/v1/robots/${robot.robotId}`]) {
    const r = await httpsGet(`${gw.ready.http}${path}`, ca, { authorization: `Bearer ${d.apiKey}` });
    expect(r.status, `${path}: ${r.body}`).toBe(200);
    views[path] = JSON.parse(r.body);
    fingerprint = r.fingerprint256;
  }
  const metrics = await httpsGet(`${gw.ready.http}/metrics`, ca, { authorization: `Bearer ${metricsToken}` });
  return { views, fingerprint, metricsStatus: metrics.status };
}

describe('a restored backup is the same gateway', () => {
  const robot = adminJson<{ robotId: string; robotToken: string }>(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'r1']);

  it('REST, /metrics with the same token, the same certificate and the same robot login after restore', async () => {
    const source = await startGatewayProcess(d.dataDir, []);
    running.push(source);
    expect(source.ready.http).toMatch(/^https:/);
    const metricsToken = readFileSync(join(d.dataDir, 'metrics-token'), 'utf8').trim();
    const agent = new RobotAgent({ address: source.ready.grpc, robotId: robot.robotId, robotToken: robot.robotToken, onCommand: () => ({ accept: true }) });
    agent.start();
    await until(() => agent.connected, 10_000, 'robot logged in');
    agent.sendSamples(Array.from({ length: 20 }, (_, i) => testSample(Date.now() - 5_000, i)));
    const ca = readFileSync(join(d.dataDir, 'tls', 'cert.pem'));
    await until(async () => {
      const r = await httpsGet(`${source.ready.http}/v1/robots/${robot.robotId}`, ca, { authorization: `Bearer ${d.apiKey}` });
      return (JSON.parse(r.body) as { motionTelemetry: unknown }).motionTelemetry !== null;
    }, 10_000, 'snapshot');
    await agent.stop();
    await until(async () => {
      const r = await httpsGet(`${source.ready.http}/v1/robots/${robot.robotId}`, ca, { authorization: `Bearer ${d.apiKey}` });
      return (JSON.parse(r.body) as { online?: boolean }).online !== true;
    }, 10_000, 'robot seen offline');
    const before = await observe(source, d.dataDir, robot, metricsToken);
    expect(before.metricsStatus).toBe(200);

    const out = join(work, 'full');
    const backup = fleetgw(['admin', 'backup', '--data-dir', d.dataDir, '--out', out, '--json']);
    expect(backup.status, backup.stderr).toBe(0);
    expect(JSON.parse(backup.stdout)).toMatchObject({ tls: true, metricsToken: true });
    expect(await source.stop('SIGTERM')).toBe(0);
    running.pop();

    const restoredDir = join(work, 'restored');
    const restore = fleetgw(['admin', 'restore', '--from', out, '--data-dir', restoredDir]);
    expect(restore.status, restore.stderr).toBe(0);
    const restored = await startGatewayProcess(restoredDir, []);
    running.push(restored);
    const after = await observe(restored, restoredDir, robot, metricsToken);
    expect(after.metricsStatus, 'the metrics token Prometheus holds opens the restored /metrics').toBe(200);
    expect(after.fingerprint, 'the same certificate').toBe(before.fingerprint);
    expect(after.views).toEqual(before.views);

    const again = new RobotAgent({ address: restored.ready.grpc, robotId: robot.robotId, robotToken: robot.robotToken, onCommand: () => ({ accept: true }) });
    again.start();
    await until(() => again.connected, 10_000, 'the robot logs in to the restored gateway');
    await again.stop();
    expect(await restored.stop('SIGTERM')).toBe(0);
    running.pop();
  }, 180_000);

  it('--no-tls leaves the TLS pair out and keeps the rest', () => {
    const out = join(work, 'no-tls');
    const r = fleetgw(['admin', 'backup', '--data-dir', d.dataDir, '--out', out, '--no-tls', '--json']);
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ tls: false, metricsToken: true });
    expect(existsSync(join(out, 'tls'))).toBe(false);
    expect(readFileSync(join(out, 'metrics-token'), 'utf8')).toBe(readFileSync(join(d.dataDir, 'metrics-token'), 'utf8'));
  });
});
