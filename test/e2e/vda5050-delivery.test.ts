/**
 * Exactly once by action id over VDA 5050, through the real `fleetgw serve`, with a hand-driven robot
 * on a plain MQTT client that answers each message it takes only when the test says (or after a
 * delay), and counts every action id that arrives:
 * - a robot slower than the command service's first resend (1 s) gets a stop and a pick once each,
 *   and both end `agent_received`: a resend with no state read since the publication asks for the
 *   robot's state instead of publishing again;
 * - a publication the robot never gets is published once more, after a state that does not show it;
 * - a start the robot never got is not published after a stop issued later (that would undo the
 *   stop): it is rejected `superseded_by_stop`, as the gRPC agent does;
 * - with mosquitto, a gateway kill -9 while the robot keeps publishing states (1 s period, so an ended
 *   action leaves its `actionStates` after 5 of them, as vda-5050-lib does): after the restart the
 *   pick is not published again (its delivery is uncertain: it ends with `retryBudgetExhausted`),
 *   the stop is (a repeat only halts).
 */
import { rmSync } from 'node:fs';
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, describe, expect, it } from 'vitest';
import { api, makeDataDir, startGatewayProcess, untilPoliciesCompiled, type RunningGateway } from '../support/gateway.js';
import { HAVE_MOSQUITTO } from '../support/mosquitto.js';
import { until } from '../support/until.js';
import { addVdaRobot, embeddedBroker, type VdaRobot } from '../support/vda-gateway.js';
import { startMosquittoFor, type MosquittoForGateway } from '../support/vda-mosquitto.js';
import { factsheetOf } from '../vda5050/vda-fixtures.js';

interface ActionState { actionId: string; actionType: string; actionStatus: string }

/** States after which an ended instant action leaves `actionStates` (vda-5050-lib's default). */
const ENDED_KEPT_FOR = 5;

/**
 * A robot that takes each instant action it receives after `delayMs` (0: only when `answerHeld()` is
 * called), in order, lists it FINISHED and publishes its state; a stateRequest is answered the same
 * way. `dropNext`: the action type whose next copy is lost on the way.
 */
class SlowRobot {
  /** Every action id that reached the robot (a lost copy included), in order. */
  readonly arrived: string[] = [];
  /** The action type whose next copy the robot never gets. */
  dropNext: string | null = null;
  delayMs = 0;
  /** The battery charge its states report (a test reads it back to know the gateway read a state). */
  battery = 80;
  private readonly held: Array<{ actionId: string; actionType: string }> = [];
  private readonly actionStates: Array<ActionState & { endedStates: number }> = [];
  paused = false;
  private headers = { state: 0, connection: 0, factsheet: 0 };
  private timer: NodeJS.Timeout | null = null;

  private constructor(private readonly c: MqttClient, private readonly prefix: string, private readonly robot: VdaRobot) {
    c.on('message', (_topic, payload) => this.onInstantActions(JSON.parse(payload.toString()) as { instantActions: Array<{ actionId: string; actionType: string }> }));
  }

  static async connect(url: string, robot: VdaRobot): Promise<SlowRobot> {
    const prefix = `uagv/v2/${robot.manufacturer}/${robot.serialNumber}`;
    const c = await mqtt.connectAsync(url, { username: robot.robotId, password: robot.robotToken, reconnectPeriod: 200, clientId: `slow-${robot.serialNumber}` });
    await c.subscribeAsync(`${prefix}/instantActions`);
    const r = new SlowRobot(c, prefix, robot);
    await r.publish('connection', { connectionState: 'ONLINE' }, true);
    await r.publish('factsheet', factsheetOf({ manufacturer: robot.manufacturer, serialNumber: robot.serialNumber }, [{ actionType: 'pick', actionScopes: ['INSTANT'], actionParameters: [] }]));
    await r.publishState();
    return r;
  }

  times(actionId: string): number {
    return this.arrived.filter((id) => id === actionId).length;
  }

  /** Announces a new session (as after a reconnect): what was published to the last one may be lost. */
  async newSession(): Promise<void> {
    await this.publish('connection', { connectionState: 'ONLINE' }, true);
  }

  /** Takes every held action now. */
  answerHeld(): void {
    for (const a of this.held.splice(0)) this.take(a);
  }

  /** A state every `ms` (the robot's periodic state). */
  periodic(ms: number): void {
    this.timer = setInterval(() => void this.publishState().catch(() => undefined), ms);
  }

  /** States published since the action ended. */
  endedStates(actionId: string): number {
    return this.actionStates.find((a) => a.actionId === actionId)?.endedStates ?? ENDED_KEPT_FOR;
  }

  async publishState(): Promise<void> {
    const body = {
      orderId: '', orderUpdateId: 0, lastNodeId: 'home', lastNodeSequenceId: 0, driving: false, paused: this.paused, operatingMode: 'AUTOMATIC',
      nodeStates: [], edgeStates: [], errors: [], loads: [],
      actionStates: this.actionStates.map(({ actionId, actionType, actionStatus }) => ({ actionId, actionType, actionStatus })),
      agvPosition: { x: 1, y: 2, theta: 0, mapId: 'site', positionInitialized: true },
      batteryState: { batteryCharge: this.battery, charging: false }, safetyState: { eStop: 'NONE', fieldViolation: false },
    };
    // As vda-5050-lib: an ended action is reported in this many states, then dropped.
    for (const a of this.actionStates) a.endedStates++;
    for (let i = this.actionStates.length - 1; i >= 0; i--) if (this.actionStates[i]!.endedStates >= ENDED_KEPT_FOR) this.actionStates.splice(i, 1);
    await this.publish('state', body);
  }

  async end(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    await this.c.endAsync(true);
  }

  private onInstantActions(m: { instantActions: Array<{ actionId: string; actionType: string }> }): void {
    for (const a of m.instantActions) {
      this.arrived.push(a.actionId);
      if (this.dropNext === a.actionType) {
        this.dropNext = null;
        continue;
      }
      if (this.delayMs === 0) this.held.push(a);
      else setTimeout(() => this.take(a), this.delayMs);
    }
  }

  private take(a: { actionId: string; actionType: string }): void {
    if (a.actionType === 'startPause') this.paused = true;
    if (a.actionType === 'stopPause') this.paused = false;
    this.actionStates.push({ actionId: a.actionId, actionType: a.actionType, actionStatus: 'FINISHED', endedStates: 0 });
    void this.publishState().catch(() => undefined);
  }

  private async publish(topic: keyof SlowRobot['headers'], body: Record<string, unknown>, retain = false): Promise<void> {
    const header = { headerId: ++this.headers[topic], timestamp: new Date().toISOString(), version: '2.0.0', manufacturer: this.robot.manufacturer, serialNumber: this.robot.serialNumber };
    await this.c.publishAsync(`${this.prefix}/${topic}`, JSON.stringify({ ...header, ...body }), retain ? { retain: true, qos: 1 } : {});
  }
}

type Depot = ReturnType<typeof makeDataDir>;

function client(gw: RunningGateway, d: Depot, robotId: string) {
  const control = async (action: 'stop' | 'start'): Promise<string> => {
    const r = await api(gw.ready.http, d.apiKey, '/v1/agent/control-robot', { method: 'POST', body: JSON.stringify({ org_id: d.orgId, fleet_id: d.fleetId, robot_id: robotId, action, ...(action === 'stop' ? { reason: 'delivery test' } : {}) }) });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.outcomes[0].delivery.commandId as string;
  };
  const base = `/v1/orgs/${d.orgId}/fleets/${d.fleetId}/robots/${robotId}`;
  return {
    online: async (): Promise<boolean> => (await api(gw.ready.http, d.apiKey, `/v1/robots/${robotId}`)).body.online === true,
    battery: async (): Promise<number | null> => (await api(gw.ready.http, d.apiKey, `/v1/robots/${robotId}`)).body.batteryPct as number | null,
    stop: async (): Promise<string> => control('stop'),
    start: async (): Promise<string> => control('start'),
    pick: async (): Promise<string> => {
      const r = await api(gw.ready.http, d.apiKey, `${base}/invoke-service`, { method: 'POST', body: JSON.stringify({ action_name: 'pick' }) });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body.delivery.commandId as string;
    },
    command: async (id: string): Promise<{ state: string; retryBudgetExhausted: boolean; rejectReason?: string }> => (await api(gw.ready.http, d.apiKey, `/v1/robot-commands/${id}`)).body,
  };
}

describe('VDA 5050 delivery to a slow robot (embedded broker)', () => {
  const d = makeDataDir('fleetgw-vda-delivery-');
  let gw: RunningGateway | undefined;
  let robot: SlowRobot | undefined;
  let robotId = '';

  afterAll(async () => {
    await robot?.end();
    await gw?.stop();
    rmSync(d.dataDir, { recursive: true, force: true });
  });

  it('a robot that answers 2.5 s after receiving (later than the first resend) gets a stop and a pick once each; a lost copy is published once more', async () => {
    const r = addVdaRobot(d.dataDir, d.fleetId, 'slow', 'Acme', 'SLOW-1');
    robotId = r.robotId;
    const broker = await embeddedBroker();
    gw = await startGatewayProcess(d.dataDir, ['--insecure-http', '--vda5050', 'on', ...broker.args]);
    robot = await SlowRobot.connect(broker.url, r);
    const c = client(gw, d, r.robotId);
    await until(c.online, 30_000, 'the robot online');
    await untilPoliciesCompiled(gw.ready.http, d.apiKey, d.orgId, d.fleetId, [r.robotId]);
    // The link's own state and factsheet requests at ONLINE, answered; the gateway has read those
    // states (a state still on its way when a command is published would count as not showing it).
    robot.battery = 81;
    robot.answerHeld();
    await until(async () => (await c.battery()) === 81, 30_000, 'the answering state read');
    robot.delayMs = 2500;

    const stop = await c.stop();
    const pick = await c.pick();
    await until(async () => (await c.command(stop)).state === 'agent_received' && (await c.command(pick)).state === 'agent_received', 30_000, 'stop and pick received');
    expect(robot.times(stop)).toBe(1);
    expect(robot.times(pick)).toBe(1);

    // A copy lost with the robot's session (it reconnects: a new connection ONLINE): the next resend
    // publishes it once more. Without a session change a pick is never sent twice: states that do not
    // list it may come from a robot that lists an action only when it starts it.
    robot.dropNext = 'pick';
    const lost = await c.pick();
    await until(() => robot!.times(lost) === 1, 10_000, 'the pick at the robot (lost there)');
    await robot.newSession();
    await until(async () => (await c.command(lost)).state === 'agent_received', 30_000, 'the lost pick received after one more publication');
    expect(robot.times(lost)).toBe(2);
    expect(robot.times(stop)).toBe(1);
    expect(robot.times(pick)).toBe(1);
  }, 90_000);

  it('a start lost on the way is not published again after a later stop: it is rejected superseded_by_stop', async () => {
    // The robot and gateway of the test above.
    const c = client(gw!, d, robotId);
    robot!.delayMs = 10;
    robot!.dropNext = 'stopPause';
    const start = await c.start();
    const stop = await c.stop();
    await until(async () => (await c.command(stop)).state === 'agent_received', 30_000, 'the stop received');
    // The start's resend comes after a state that does not show it: published then, it would undo the stop.
    await until(async () => (await c.command(start)).state !== 'dispatched' || robot!.times(start) > 1, 30_000, 'the start decided');
    expect(await c.command(start)).toMatchObject({ state: 'agent_rejected', rejectReason: 'superseded_by_stop' });
    expect(robot!.times(start)).toBe(1);
    expect(robot!.paused).toBe(true);
  }, 60_000);
});

describe.skipIf(!HAVE_MOSQUITTO)('VDA 5050 delivery across a gateway kill -9 with mosquitto', () => {
  const d = makeDataDir('fleetgw-vda-delivery-kill-');
  let gw: RunningGateway | undefined;
  let robot: SlowRobot | undefined;
  let mosquitto: MosquittoForGateway | undefined;

  afterAll(async () => {
    await robot?.end();
    await gw?.stop('SIGKILL');
    await mosquitto?.close();
    rmSync(d.dataDir, { recursive: true, force: true });
  });

  it('a pick the robot took and no longer lists after the restart is not published again; a stop is', async () => {
    const r = addVdaRobot(d.dataDir, d.fleetId, 'kept', 'Acme', 'K-1');
    mosquitto = await startMosquittoFor(d.dataDir, [r]);
    const args = ['--insecure-http', ...mosquitto.serveArgs];
    gw = await startGatewayProcess(d.dataDir, args);
    robot = await SlowRobot.connect(mosquitto.url, r);
    let c = client(gw, d, r.robotId);
    await until(c.online, 30_000, 'the robot online');
    await untilPoliciesCompiled(gw.ready.http, d.apiKey, d.orgId, d.fleetId, [r.robotId]);
    robot.battery = 81;
    robot.answerHeld();
    await until(async () => (await c.battery()) === 81, 30_000, 'the answering state read');

    // Both reach the robot; the gateway dies before any state shows them.
    const stop = await c.stop();
    const pick = await c.pick();
    await until(() => robot!.times(stop) === 1 && robot!.times(pick) === 1, 10_000, 'stop and pick at the robot');
    await gw.stop('SIGKILL');
    // The robot takes them and goes on publishing states (the broker is up): after 5 states they leave its actionStates.
    robot.answerHeld();
    robot.delayMs = 10;
    robot.periodic(1000);
    await until(() => robot!.endedStates(stop) === ENDED_KEPT_FOR && robot!.endedStates(pick) === ENDED_KEPT_FOR, 30_000, 'both ended and dropped from actionStates');

    gw = await startGatewayProcess(d.dataDir, args);
    c = client(gw, d, r.robotId);
    await until(async () => (await c.command(stop)).state === 'agent_received', 30_000, 'the stop published again and received');
    // (A second copy of the pick, were it published, ends the wait at once and fails below.)
    await until(async () => robot!.times(pick) > 1 || (await c.command(pick)).retryBudgetExhausted, 60_000, 'the pick\'s retry budget spent');
    expect((await c.command(pick)).state).toBe('dispatched');
    expect(robot.times(pick)).toBe(1);
    // A stop repeated after a restart only halts (a paused robot refuses it as already paused).
    expect(robot.times(stop)).toBe(2);
  }, 150_000);
});
