/**
 * Faults under 100 third-party VDA 5050 AGVs (vda-5050-lib), through the real processes: kill -9 of
 * the gateway (embedded broker, so the broker dies with it) and a restart of an external broker
 * (Debian mosquitto) while stop and start commands go out to every AGV (and stops while the broker is
 * down, kept `deferred`). Each AGV counts the instant actions it receives by action id (the action id
 * is the gateway's command id): every command the gateway accepted arrives exactly once, none twice,
 * the AGVs' states settle on the last command, and the gateway reports every one `agent_received`.
 */
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { api, type RunningGateway } from '../support/gateway.js';
import { HAVE_MOSQUITTO } from '../support/mosquitto.js';
import { until } from '../support/until.js';
import { startVirtualAgvs, type VirtualAgv } from '../support/vda-agv.js';
import { startMosquittoFor, type MosquittoForGateway } from '../support/vda-mosquitto.js';
import { freePort, serve, sleep } from './support.js';
import { provisionVda, type VdaDepot } from './vda5050-support.js';

const AGVS = 100;
const ROUNDS = Number(process.env.FLEETGW_FAULT_VDA_ROUNDS ?? 6);

/** Why a target got no command (a cut request, a refused outcome), for the test's report line. */
const notSent: string[] = [];

interface Sent {
  commandId: string;
  robotId: string;
  action: 'stop' | 'start';
}

/**
 * One stop or start to every robot (two bulk requests of at most 100 targets); returns what the
 * gateway accepted. A request cut by a kill returns nothing: whatever it made durable still counts
 * (an unknown action id may then arrive, but at most once).
 */
async function broadcast(gw: RunningGateway, depot: VdaDepot, action: 'stop' | 'start'): Promise<Sent[]> {
  const sent: Sent[] = [];
  const ids = depot.robotList.map((r) => r.robotId);
  for (let i = 0; i < ids.length; i += 100) {
    const res = await api(gw.ready.http, depot.apiKey, '/v1/agent/control-robot', {
      method: 'POST',
      body: JSON.stringify({ org_id: depot.orgId, fleet_id: depot.fleetId, action, robot_ids: ids.slice(i, i + 100), wait_for_ack_ms: 1 }),
    }).catch(() => null);
    if (res === null) {
      notSent.push('request cut');
      continue;
    }
    for (const o of (res.body.outcomes ?? []) as Array<{ robotId: string; delivery?: { commandId: string }; error?: unknown }>) {
      if (o.delivery?.commandId !== undefined) sent.push({ commandId: o.delivery.commandId, robotId: o.robotId, action });
      else notSent.push(JSON.stringify(o.error ?? res.body).slice(0, 200));
    }
    if (res.body.outcomes === undefined) notSent.push(`${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
  }
  return sent;
}

/** Every accepted command arrived exactly once at its own AGV; no command arrived twice anywhere. */
function checkExactlyOnce(agvs: VirtualAgv[], depot: VdaDepot, sent: Sent[]): { missing: Sent[]; doubled: Array<{ robotId: string; actionId: string; times: number }> } {
  const agvOf = new Map(depot.robotList.map((r, i) => [r.robotId, agvs[i]!]));
  const missing = sent.filter((s) => (agvOf.get(s.robotId)!.countsByActionId().get(s.commandId) ?? 0) === 0);
  const doubled: Array<{ robotId: string; actionId: string; times: number }> = [];
  depot.robotList.forEach((r, i) => {
    for (const [actionId, times] of agvs[i]!.countsByActionId()) {
      // The link's own state and factsheet requests are not commands.
      if (times > 1 && !actionId.startsWith('fleetgw-')) doubled.push({ robotId: r.robotId, actionId, times });
    }
  });
  return { missing, doubled };
}

/** The last accepted command of each robot decides its pause state. */
async function statesSettle(agvs: VirtualAgv[], depot: VdaDepot, sent: Sent[]): Promise<void> {
  const last = new Map<string, Sent>();
  for (const s of sent) last.set(s.robotId, s);
  await until(() => depot.robotList.every((r, i) => {
    const want = last.get(r.robotId);
    return want === undefined || agvs[i]!.state().paused === (want.action === 'stop');
  }), 60_000, 'every AGV paused or running as its last command says');
}

/**
 * The gateway's side (GET /v1/robot-commands/{id}): every accepted command ends `agent_received`, or,
 * a start only, `agent_rejected` `superseded_by_stop` (a stop issued after it went out first: it is
 * not published after that stop). Returns the superseded starts.
 */
async function allReceived(gw: RunningGateway, depot: VdaDepot, sent: Sent[]): Promise<Set<string>> {
  let open = sent;
  const superseded = new Set<string>();
  const last: Record<string, string> = {};
  await until(async () => {
    const still: Sent[] = [];
    for (let i = 0; i < open.length; i += 20) {
      await Promise.all(open.slice(i, i + 20).map(async (s) => {
        const r = await api(gw.ready.http, depot.apiKey, `/v1/robot-commands/${s.commandId}`).catch(() => null);
        const b = r?.body as { state?: string; rejectReason?: string; retryBudgetExhausted?: boolean } | undefined;
        last[s.commandId] = r === null ? 'unreachable' : `${r.status} ${String(b?.state)} ${b?.rejectReason ?? ''}${b?.retryBudgetExhausted === true ? ' exhausted' : ''}`;
        if (s.action === 'start' && b?.state === 'agent_rejected' && b.rejectReason === 'superseded_by_stop') superseded.add(s.commandId);
        else if (b?.state !== 'agent_received') still.push(s);
      }));
    }
    open = still;
    return open.length === 0;
  }, 60_000, 'every accepted command agent_received', 500).catch((err: unknown) => {
    throw new Error(`${(err as Error).message}: ${open.length} not received, e.g. ${open.slice(0, 3).map((s) => `${s.action} ${s.commandId}: ${last[s.commandId]}`).join('; ')}`);
  });
  return superseded;
}

async function allOnline(gw: RunningGateway, depot: VdaDepot): Promise<void> {
  await until(async () => {
    const r = await api(gw.ready.http, depot.apiKey, `/v1/robots?fleet_id=${depot.fleetId}`).catch(() => null);
    return ((Array.isArray(r?.body) ? r.body : []) as Array<{ online: boolean }>).filter((x) => x.online).length === AGVS;
  }, 90_000, `all ${AGVS} AGVs online`, 250);
}

describe('VDA 5050 AGVs under gateway and broker faults', () => {
  const depots: VdaDepot[] = [];
  let agvs: VirtualAgv[] = [];
  let mosquitto: MosquittoForGateway | null = null;
  // Every gateway started: a failed test must not leave one running (SIGKILL of one already stopped is a no-op).
  const gateways: RunningGateway[] = [];
  const serveTracked = async (...args: Parameters<typeof serve>): Promise<RunningGateway> => {
    const g = await serve(...args);
    gateways.push(g);
    return g;
  };

  afterAll(async () => {
    await Promise.all(agvs.map((a) => a.stop().catch(() => {})));
    for (const g of gateways) await g.stop('SIGKILL');
    await mosquitto?.close();
    for (const d of depots) rmSync(d.dataDir, { recursive: true, force: true });
  });

  it(`kill -9 of the gateway (embedded broker) ${ROUNDS} times while commands go out to ${AGVS} AGVs: none lost, none doubled, states settle`, async () => {
    const depot = await provisionVda(AGVS);
    depots.push(depot);
    const mqttPort = await freePort();
    const grpcPort = await freePort();
    const args = ['--vda5050-mqtt-port', String(mqttPort)];
    let gw = await serveTracked(depot, grpcPort, args);
    agvs = await startVirtualAgvs(depot.robotList.map((r, i) => ({
      brokerUrl: `mqtt://127.0.0.1:${mqttPort}`, username: r.robotId, password: r.robotToken, manufacturer: r.manufacturer, serialNumber: r.serialNumber,
      stateMs: 5000, visualizationMs: 0, position: { x: (i % 10) * 10, y: Math.floor(i / 10) * 10 },
    })));
    await allOnline(gw, depot);
    const sent: Sent[] = [];
    for (let k = 0; k < ROUNDS; k++) {
      sent.push(...await broadcast(gw, depot, k % 2 === 0 ? 'stop' : 'start'));
      // A random moment while those commands are in flight (published, the AGVs' confirming states on
      // their way), the first round at once.
      await sleep(k === 0 ? 0 : Math.floor(Math.random() * 200));
      await gw.stop('SIGKILL');
      gw = await serveTracked(depot, grpcPort, args);
      await allOnline(gw, depot);
    }
    await statesSettle(agvs, depot, sent);
    const superseded = await allReceived(gw, depot, sent);
    // A superseded start need not arrive (it may have, before the stop).
    const { missing, doubled } = checkExactlyOnce(agvs, depot, sent.filter((x) => !superseded.has(x.commandId)));
    console.log(`[faults] ${JSON.stringify({ test: 'vda5050-kill-gateway', agvs: AGVS, rounds: ROUNDS, commands: sent.length, superseded: superseded.size, notSent: notSent.length, notSentExample: notSent[0] ?? null, missing: missing.length, doubled: doubled.length })}`);
    notSent.length = 0;
    expect(sent.length).toBeGreaterThan(0);
    expect(missing).toEqual([]);
    expect(doubled).toEqual([]);
    await Promise.all(agvs.map((a) => a.stop()));
    agvs = [];
    expect(await gw.stop('SIGTERM')).toBe(0);
  });

  it.skipIf(!HAVE_MOSQUITTO)(`a mosquitto restart while commands go out to ${AGVS} AGVs: none lost, none doubled, states settle`, async () => {
    // The AGVs of a failed first test must not linger beside this one's.
    await Promise.all(agvs.splice(0).map((a) => a.stop().catch(() => {})));
    const depot = await provisionVda(AGVS);
    depots.push(depot);
    mosquitto = await startMosquittoFor(depot.dataDir, depot.robotList);
    const gw = await serveTracked(depot, await freePort(), mosquitto.serveArgs);
    agvs = await startVirtualAgvs(depot.robotList.map((r, i) => ({
      brokerUrl: mosquitto!.url, username: r.robotId, password: r.robotToken, manufacturer: r.manufacturer, serialNumber: r.serialNumber,
      stateMs: 5000, visualizationMs: 0, position: { x: (i % 10) * 10, y: Math.floor(i / 10) * 10 },
    })));
    await allOnline(gw, depot);
    const sent: Sent[] = [];
    for (let k = 0; k < ROUNDS; k++) {
      sent.push(...await broadcast(gw, depot, k % 2 === 0 ? 'stop' : 'start'));
      await sleep(k === 0 ? 0 : Math.floor(Math.random() * 200));
      await mosquitto.stop(k % 2 === 0);
      // While the broker is down every robot is offline: a stop is kept (deferred) and published when
      // it is back, while the commands sent before wait unconfirmed (a start would be refused).
      sent.push(...await broadcast(gw, depot, 'stop'));
      await mosquitto.restart();
      await allOnline(gw, depot);
    }
    await statesSettle(agvs, depot, sent);
    const superseded = await allReceived(gw, depot, sent);
    // A superseded start need not arrive (it may have, before the stop).
    const { missing, doubled } = checkExactlyOnce(agvs, depot, sent.filter((x) => !superseded.has(x.commandId)));
    console.log(`[faults] ${JSON.stringify({ test: 'vda5050-broker-restart', agvs: AGVS, rounds: ROUNDS, commands: sent.length, superseded: superseded.size, notSent: notSent.length, notSentExample: notSent[0] ?? null, missing: missing.length, doubled: doubled.length })}`);
    expect(sent.length).toBeGreaterThan(0);
    expect(missing).toEqual([]);
    expect(doubled).toEqual([]);
    await Promise.all(agvs.map((a) => a.stop()));
    agvs = [];
    expect(await gw.stop('SIGTERM')).toBe(0);
  });
});
