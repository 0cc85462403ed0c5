import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { create, fromBinary } from '@bufbuild/protobuf';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CommandAck_Status, CommandSchema } from '../../src/gen/fleetgw/v1/robot_link_pb.js';
import { HealthLevel, TelemetryBatchSchema, type TelemetrySample } from '../../src/gen/fleetgw/v1/telemetry_pb.js';
import { DEPOT, loadRobotsFile, RobotModel, runSimFleet, toLatLon, type SimFleet } from '../../src/sim/index.js';
import { startHarness, waitFor, type Harness } from '../robotlink/support.js';

let h: Harness;
let fleet: SimFleet | null = null;

beforeEach(async () => {
  h = await startHarness();
});

afterEach(async () => {
  await fleet?.stop();
  fleet = null;
  await h.close();
});

function samplesOf(robotId: string): TelemetrySample[] {
  return h.events.telemetry.filter((t) => t.robotId === robotId).flatMap((t) => fromBinary(TelemetryBatchSchema, t.batch).samples);
}

const corner = toLatLon(DEPOT.halfSizeM, DEPOT.halfSizeM);
const inDepot = (s: TelemetrySample): boolean =>
  Math.abs(s.position!.latitude - DEPOT.latitude) <= corner.latitude - DEPOT.latitude &&
  Math.abs(s.position!.longitude - DEPOT.longitude) <= corner.longitude - DEPOT.longitude;

describe('simulated fleet', () => {
  it('streams batched telemetry at the requested rate from robots driving inside the depot', async () => {
    const creds = [h.robot('a'), h.robot('b'), h.robot('c')];
    fleet = runSimFleet({ grpc: h.server.address, robots: creds, hz: 50 });
    await waitFor(() => h.events.online.length === 3, 'all robots online');
    expect(h.events.online.every((e) => e.capabilities.includes('stop') && e.agentVersion.startsWith('fleetgw-sim/'))).toBe(true);
    // Two seconds of samples each; their times (not the wall clock the test sees) carry the 50 Hz rate.
    await waitFor(() => creds.every((c) => samplesOf(c.robotId).length >= 100), '100 samples from every robot', 30_000);
    for (const c of creds) {
      const s = samplesOf(c.robotId);
      const gaps = s.slice(1).map((x, i) => Number(x.tsMs - s[i]!.tsMs));
      expect(gaps.every((g) => g >= 19 && g <= 21)).toBe(true);
      expect(s.every(inDepot)).toBe(true);
      expect(s.every((x) => x.mode === 'autonomous' && x.gpsFix === 4 && x.health?.level === HealthLevel.OK && !x.estop)).toBe(true);
      expect(s.every((x) => x.battery!.percent > 0 && x.battery!.percent <= 100)).toBe(true);
      const first = s[0]!.position!;
      const last = s[s.length - 1]!.position!;
      expect(first.latitude !== last.latitude || first.longitude !== last.longitude).toBe(true);
    }
    // Several samples per message: batching is what keeps high rates cheap.
    const st = fleet.stats();
    expect(st.connected).toBe(3);
    expect(st.samplesSent / st.batchesSent).toBeGreaterThan(2);
  });

  it('acks a Stop and actually stops: speed 0, mode paused, position frozen, while the others keep driving', async () => {
    const creds = [h.robot('stopper'), h.robot('driver')];
    fleet = runSimFleet({ grpc: h.server.address, robots: creds, hz: 50 });
    await waitFor(() => h.events.online.length === 2, 'online');
    const target = creds[0]!.robotId;
    await waitFor(() => (samplesOf(target).at(-1)?.velocity?.linearMps ?? 0) > 0.2, 'the robot moving', 30_000);
    const cmd = create(CommandSchema, { commandId: 'stop-1', seq: 1n, issuedAtMs: BigInt(Date.now()), action: { case: 'stop', value: { reason: 'test' } } });
    expect(h.server.link.send(target, cmd)).toBe(true);
    await waitFor(() => h.events.acks.length === 1, 'ack');
    expect(h.events.acks[0]).toMatchObject({ robotId: target, ack: { commandId: 'stop-1', status: CommandAck_Status.RECEIVED } });
    const ackedAt = Date.now();
    // Deceleration takes at most ~1.4 s of sample time: 21 samples after 1.6 s, and the other robot's too.
    const after = (robotId: string): TelemetrySample[] => samplesOf(robotId).filter((s) => Number(s.tsMs) > ackedAt + 1600);
    await waitFor(() => after(target).length > 20 && after(creds[1]!.robotId).length > 20, '21 samples from each robot after the stop settled', 30_000);
    const held = after(target);
    const p0 = held[0]!.position!;
    for (const s of held) {
      expect(s.velocity?.linearMps ?? 0).toBe(0);
      expect(s.mode).toBe('paused');
      expect(s.position).toEqual(p0);
    }
    const other = samplesOf(creds[1]!.robotId).filter((s) => Number(s.tsMs) > ackedAt + 1600);
    expect(other.some((s) => s.mode === 'autonomous' && (s.velocity?.linearMps ?? 0) > 0)).toBe(true);
  });

  it('rejects a command without a known action', async () => {
    const cred = h.robot();
    fleet = runSimFleet({ grpc: h.server.address, robots: [cred], hz: 10 });
    await waitFor(() => h.events.online.length === 1, 'online');
    h.server.link.send(cred.robotId, create(CommandSchema, { commandId: 'x', seq: 1n }));
    await waitFor(() => h.events.acks.length === 1, 'ack');
    expect(h.events.acks[0]?.ack).toMatchObject({ status: CommandAck_Status.REJECTED, reason: 'unsupported_action' });
    expect(fleet.robots[0]!.model.mode).toBe('autonomous');
  });

  it('pauses a robot whose link has been down longer than stopOnLinkLossMs', async () => {
    const cred = h.robot();
    fleet = runSimFleet({ grpc: h.server.address, robots: [cred], hz: 10, stopOnLinkLossMs: 300 });
    await waitFor(() => h.events.online.length === 1, 'online');
    h.server.forceClose();
    await waitFor(() => fleet!.robots[0]!.model.mode === 'paused', 'paused after link loss', 3000);
  });
});

describe('RobotModel', () => {
  it('drains the battery while driving, docks to recharge when low, then drives again', () => {
    const m = new RobotModel('00000000-0000-4000-8000-000000000001', 0);
    const start = m.batteryPct;
    for (let i = 0; i < 600; i++) m.step(0.1);
    expect(m.batteryPct).toBeLessThan(start);
    m.batteryPct = 19;
    let charged = false;
    for (let i = 0; i < 20 * 60 * 10 && !charged; i++) {
      m.step(0.1);
      if (m.phase === 'charging') {
        const s = m.sample(0);
        expect(s.charging).toBe(true);
        expect(s.mode).toBe('idle');
        expect(s.linearMps).toBe(0);
        charged = true;
      }
    }
    expect(charged).toBe(true);
    for (let i = 0; i < 10_000 && m.phase === 'charging'; i++) m.step(1);
    expect(m.phase).toBe('driving');
    expect(m.batteryPct).toBeGreaterThanOrEqual(95);
  });

  it('stays inside the depot', () => {
    const m = new RobotModel('00000000-0000-4000-8000-000000000002', 3);
    for (let i = 0; i < 20_000; i++) {
      m.step(0.05);
      expect(Math.abs(m.x)).toBeLessThanOrEqual(DEPOT.halfSizeM);
      expect(Math.abs(m.y)).toBeLessThanOrEqual(DEPOT.halfSizeM);
    }
  });
});

describe('loadRobotsFile', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fleetgw-robots-file-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string): string => {
    const p = path.join(dir, name);
    writeFileSync(p, text);
    return p;
  };
  const id = '11111111-2222-4333-8444-555555555555';

  it('reads an array or {robots: [...]}', () => {
    const one = [{ robotId: id, robotToken: 'fgr_secret' }];
    expect(loadRobotsFile(file('a.json', JSON.stringify(one)))).toEqual(one);
    expect(loadRobotsFile(file('b.json', JSON.stringify({ robots: one })))).toEqual(one);
  });

  it('rejects bad files with clear errors that never echo a token', () => {
    const cases: [string, RegExp][] = [
      ['not json', /not valid JSON/],
      ['{"x":1}', /expected a JSON array/],
      ['[]', /lists no robots/],
      ['[5]', /entry 0 is not an object/],
      [JSON.stringify([{ robotId: 'nope', robotToken: 'fgr_secret' }]), /entry 0 needs robotId/],
      [JSON.stringify([{ robotId: id, robotToken: '' }]), /needs a non-empty robotToken/],
      [JSON.stringify([{ robotId: id, robotToken: 'fgr_secret' }, { robotId: id, robotToken: 'fgr_secret' }]), /listed twice/],
    ];
    cases.forEach(([text, re], i) => {
      let msg = '';
      try {
        loadRobotsFile(file(`bad${i}.json`, text));
      } catch (err) {
        msg = (err as Error).message;
      }
      expect(msg).toMatch(re);
      expect(msg).not.toContain('fgr_secret');
    });
    expect(() => loadRobotsFile(path.join(dir, 'missing.json'))).toThrow(/cannot read robots file/);
  });
});
