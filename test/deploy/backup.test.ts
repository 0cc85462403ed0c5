/**
 * `fleetgw admin backup` while `fleetgw serve` runs and writes (robot telemetry snapshots, keys created
 * by another process), then `fleetgw admin restore` into an empty data dir and a gateway started on
 * it: the same API key, robot token and telemetry snapshot work there. Real processes throughout.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { RobotAgent } from '../../src/agent/index.js';
import { seqMetaKey } from '../../src/commands/keys.js';
import { RESTORE_SEQ_SKIP } from '../../src/commands/restore-seq.js';
import { openStore } from '../../src/store/lmdb.js';
import { adminJson, FLEETGW_BIN, fleetgw } from '../support/cli.js';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { testSample } from '../support/samples.js';
import { until } from '../support/until.js';

const run = promisify(execFile);
const work = mkdtempSync(join(tmpdir(), 'fleetgw-backup-'));
const d = makeDataDir('fleetgw-backup-src-');
const running: RunningGateway[] = [];
afterAll(async () => {
  for (const gw of running) await gw.stop('SIGKILL');
  rmSync(work, { recursive: true, force: true });
  rmSync(d.dataDir, { recursive: true, force: true });
});

describe('backup while serving, restore into an empty data dir', () => {
  const backupDir = join(work, 'backup-1');
  const restoredDir = join(work, 'restored');
  const robot = adminJson(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'r1']);
  const t0 = Date.now() - 10_000;

  it('takes a consistent backup while the gateway and another admin process write', async () => {
    // A TLS pair as the gateway's self-signed mode leaves it (the backup carries it, mode kept).
    mkdirSync(join(d.dataDir, 'tls'), { mode: 0o700 });
    writeFileSync(join(d.dataDir, 'tls', 'key.pem'), 'test key\n', { mode: 0o600 });
    const gw = await startGatewayProcess(d.dataDir);
    running.push(gw);
    const agent = new RobotAgent({ address: gw.ready.grpc, robotId: robot.robotId!, robotToken: robot.robotToken!, onCommand: () => ({ accept: true }), maxQueuedSamples: 10_000 });
    agent.start();
    await until(() => agent.connected, 10_000, 'agent connected');
    let i = 0;
    const feed = setInterval(() => {
      agent.sendSamples(Array.from({ length: 20 }, () => testSample(t0, i++)));
    }, 20);
    try {
      await until(async () => (await api(gw.ready.http, d.apiKey, `/v1/robots/${robot.robotId!}`)).body.motionTelemetry !== null, 10_000, 'first snapshot');
      // Writers in two processes while the copy runs: the gateway (snapshots) and admin (keys).
      const keys = (async () => {
        for (let k = 0; k < 3; k++) {
          await run(process.execPath, [FLEETGW_BIN, 'admin', 'create-key', '--data-dir', d.dataDir, '--org', d.orgId, '--permissions', 'robots:read', '--json']);
        }
      })();
      const backup = await run(process.execPath, [FLEETGW_BIN, 'admin', 'backup', '--data-dir', d.dataDir, '--out', backupDir, '--json']);
      await keys;
      const manifest = JSON.parse(backup.stdout) as { format: string; tls: boolean; counts: Record<string, number> };
      expect(manifest).toMatchObject({ format: 'fleetgw-backup/1', tls: true, counts: { orgs: 1, fleets: 1, robots: 1, snapshots: 1 } });
      expect(manifest.counts.apikeys).toBeGreaterThanOrEqual(1);
      expect(manifest.counts.apikeys).toBeLessThanOrEqual(4);
    } finally {
      clearInterval(feed);
      await agent.stop();
      expect(await gw.stop('SIGTERM')).toBe(0);
      running.pop();
    }
    expect(JSON.parse(readFileSync(join(backupDir, 'manifest.json'), 'utf8'))).toMatchObject({ format: 'fleetgw-backup/1' });
    expect(statSync(join(backupDir, 'lmdb', 'data.mdb')).mode & 0o777).toBe(0o600);
    expect(statSync(join(backupDir, 'tls', 'key.pem')).mode & 0o777).toBe(0o600);
    // No temporary directory is left next to the backup.
    expect(existsSync(join(work, `.backup-1.partial-${process.pid}`))).toBe(false);
  }, 60_000);

  it('refuses to overwrite: an existing --out, or a restore into a data dir that holds data', () => {
    const again = fleetgw(['admin', 'backup', '--data-dir', d.dataDir, '--out', backupDir]);
    expect(again.status).toBe(2);
    expect(again.stderr).toContain('exists: name a new directory');
    const over = fleetgw(['admin', 'restore', '--from', backupDir, '--data-dir', d.dataDir]);
    expect(over.status).toBe(2);
    expect(over.stderr).toContain('already holds gateway data: stop the gateway and move that data dir away first');
    const notBackup = fleetgw(['admin', 'restore', '--from', work, '--data-dir', join(work, 'x')]);
    expect(notBackup.status).toBe(2);
    expect(notBackup.stderr).toContain('is not a backup');
  });

  it('a gateway on the restored data dir accepts the same API key and robot token and serves the snapshot', async () => {
    const r = fleetgw(['admin', 'restore', '--from', backupDir, '--data-dir', restoredDir, '--json']);
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ restored: restoredDir, counts: { robots: 1, snapshots: 1 }, commandSeqsSkippedForRobots: 1 });
    // Command seqs the robot may have applied after the backup are never handed out again.
    const restoredStore = openStore(restoredDir);
    try {
      expect(restoredStore.meta.get(seqMetaKey(robot.robotId!))).toBeGreaterThanOrEqual(RESTORE_SEQ_SKIP);
    } finally {
      await restoredStore.close();
    }
    expect(readFileSync(join(restoredDir, 'tls', 'key.pem'), 'utf8')).toBe('test key\n');
    const gw = await startGatewayProcess(restoredDir);
    running.push(gw);
    const view = await api(gw.ready.http, d.apiKey, `/v1/robots/${robot.robotId!}`);
    expect(view.status).toBe(200);
    expect(view.body.motionTelemetry.tsMs).toBeGreaterThanOrEqual(t0);
    const agent = new RobotAgent({ address: gw.ready.grpc, robotId: robot.robotId!, robotToken: robot.robotToken!, onCommand: () => ({ accept: true }) });
    agent.start();
    await until(() => agent.connected, 10_000, 'agent connected to the restored gateway');
    await agent.stop();
    expect(await gw.stop('SIGTERM')).toBe(0);
    running.pop();
  }, 60_000);
});
