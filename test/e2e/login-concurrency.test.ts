/**
 * The per-account login throttle holds under concurrency, through `fleetgw serve`: wrong passwords
 * for one account sent 10 at a time, round after round, get at most the documented number of password
 * checks (5 at once, then 1 a minute: docs/sessions.md, "Failed logins"). A check is counted twice:
 * by its answer (401; a throttled login is 429, one refused for lack of a check slot 503, and neither
 * checks the password) and by the `user.login_failed` event each check of a known account records.
 */
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLEETGW_BIN } from '../support/cli.js';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';

const PASSWORD = 'correct horse battery staple';
const BURST = 5;
const REFILL_S = 60;
const AT_ONCE = 10;
const ROUNDS = 4;

describe('login throttle under concurrency', () => {
  let d: ReturnType<typeof makeDataDir>;
  let gw: RunningGateway;
  let userId: string;

  beforeAll(async () => {
    d = makeDataDir('fleetgw-login-race-');
    const r = spawnSync(process.execPath, [FLEETGW_BIN, 'admin', 'create-user', '--data-dir', d.dataDir, '--org', d.orgId, '--email', 'target@acme.test', '--role', 'viewer', '--json'], {
      input: `${PASSWORD}\n`,
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(r.status, r.stderr).toBe(0);
    userId = (JSON.parse(r.stdout) as { userId: string }).userId;
    gw = await startGatewayProcess(d.dataDir);
  }, 60_000);

  afterAll(async () => {
    await gw?.stop();
    if (d) rmSync(d.dataDir, { recursive: true, force: true });
  });

  const login = async (password: string): Promise<{ status: number; code: string; retryAfter: string | null }> => {
    const res = await fetch(`${gw.ready.http}/v1/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'target@acme.test', password }),
    });
    const body = (await res.json()) as { code: string };
    return { status: res.status, code: body.code, retryAfter: res.headers.get('retry-after') };
  };

  it('checks at most 5 wrong passwords at once, then 1 a minute, however many arrive together', async () => {
    const started = Date.now();
    const statuses: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const answers = await Promise.all(Array.from({ length: AT_ONCE }, (_, i) => login(`wrong password ${round}-${i}`)));
      for (const a of answers) {
        // Checked and wrong, throttled, or no check slot free: nothing else.
        expect([401, 429, 503]).toContain(a.status);
        if (a.status !== 401) expect(Number(a.retryAfter)).toBeGreaterThanOrEqual(1);
        statuses.push(a.status);
      }
    }
    const elapsedS = (Date.now() - started) / 1000;
    const checked = statuses.filter((s) => s === 401).length;
    const budget = BURST + Math.floor(elapsedS / REFILL_S);
    expect(checked, `password checks in ${elapsedS.toFixed(1)} s: ${statuses.join(',')}`).toBeLessThanOrEqual(budget);
    // The gateway can check 4 at once, so the first round alone uses 4 of the burst: the budget is reached, not just respected.
    expect(checked).toBeGreaterThanOrEqual(Math.min(BURST, 4));

    // Every check the gateway ran is on the user's timeline: the answers did not hide any.
    const ev = await api(gw.ready.http, d.apiKey, `/v1/events?fleet_id=${d.fleetId}&correlation_id=${userId}`);
    expect(ev.status).toBe(200);
    expect((ev.body.items as { kind: string }[]).filter((e) => e.kind === 'user.login_failed')).toHaveLength(checked);

    // The bucket is empty: even the right password is not checked until it refills.
    if (checked >= BURST && (Date.now() - started) / 1000 < REFILL_S) {
      const right = await login(PASSWORD);
      expect(right.status).toBe(429);
      expect(right.code).toBe('rate_limited');
    }
  }, 120_000);
});
