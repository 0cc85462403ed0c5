/**
 * Master control: the gateway's robot link to VDA 5050 robots over MQTT. It subscribes to every
 * bound robot's `connection`, `state`, `visualization` and `factsheet`, reports them to the link's
 * listeners the way the gRPC link reports its robots (online/offline, telemetry batches, acks, health
 * reports, mission status), and publishes commands as `instantActions` and `order` messages. The
 * mapping and the delivery rules are in docs/vda5050.md.
 *
 * The session on the broker (src/vda5050/broker) is attached inside the embedded broker, or an MQTT
 * client of an external one. Inbound messages are read once per robot per batch the session hands
 * over (one socket read, of the robot's connection or of master control's): a robot's `state` and
 * `visualization` are full snapshots, so an unread one is replaced by a newer one (counted as
 * coalesced). A robot that floods costs one parse per read, and never delays another robot's
 * messages or stops.
 */
import { create } from '@bufbuild/protobuf';
import type { Logger } from 'pino';
import { CommandAck_Status, CommandAckSchema, type Command, type FieldRuleSet, type MissionStart, type MissionStatus } from '../../gen/fleetgw/v1/robot_link_pb.js';
import type { LinkConflictView, RobotLink, RobotLinkListener } from '../../protocol/robot-link.js';
import type { MasterSession, Vda5050Binding, Vda5050Broker, Vda5050Identities, Vda5050Robot } from '../contracts.js';
import { resendPlan, verdictOf, type Verdict } from './delivery.js';
import { capabilitiesOf, policyOf, UNSUPPORTED_ACTIONS } from './factsheet.js';
import { HEALTH_REFRESH_MS, healthReportOf, healthSignature } from './health.js';
import { MapFrame } from './map-frame.js';
import { createInboundGate, type InboundGate } from '../inbound/index.js';
import { readConnection, readFactsheet, readState, readVisualization, VdaMessageError, type VdaState, type VdaVisualization } from './messages.js';
import { MissionProgress } from './mission.js';
import { deviationKeysOf, isMotionCommand, missionOrderOf, outboundOf, type DeviationKey, type MissionOrder, type Outbound } from './outbound.js';
import { PublishQueue } from './publish-queue.js';
import { nextHeaderId, RobotEntry } from './robot-entry.js';
import type { StopMarks } from './stop-marks.js';
import { batchOf, type MissionSampleInfo } from './telemetry.js';
import { inboundFilters, parseInboundTopic, robotTopic, topicPrefix } from './topics.js';

/** The shortest time between two warnings about a robot's unknown mission orders. */
const UNKNOWN_ORDER_LOG_MS = 60_000;

/**
 * How long an online robot may be silent (no message on any of its topics) before master control
 * asks for its state, and before it takes the robot offline. A VDA 5050 robot publishes its state at
 * least every 30 s (vda-5050-lib's default period), so a silent one has lost its connection, without
 * a last will or with one the broker could not send (an external broker that restarted without it).
 */
export const SILENCE = { askAfterMs: 35_000, offlineAfterMs: 45_000, checkEveryMs: 5_000 } as const;

/** The shortest time between two state requests to a robot (not known online, or not yet showing a command). */
export const STATE_REQUEST_EVERY_MS = 2_000;

export interface Vda5050LinkOptions {
  /** The broker and how master control's session on it is opened (src/vda5050/broker). */
  broker: Vda5050Broker;
  identities: Vda5050Identities;
  log: Logger;
  /** Where the robots' map lies on the earth; the simulator's depot by default. */
  frame?: MapFrame;
  /**
   * The inbound gate every robot message passes first (src/vda5050/inbound: bounds, JSON, version,
   * identity, schema, headerId order); one of its own when not given.
   */
  gate?: InboundGate;
  /** MQTT client id of master control (unique per gateway on a shared broker). */
  clientId?: string;
  /**
   * The MissionStart that started run `runId` on the robot, or null when the run is unknown (deleted,
   * another robot's or another gateway's). Asked once for a mission order the robot runs that this
   * link did not send since it started (after a gateway restart), to rebuild the order's node steps
   * and mission id. Without it, such an order's progress is estimated from the nodes left.
   */
  missionStartOf?: (robotId: string, runId: string) => MissionStart | null;
  now?: () => number;
  /** Each robot's stop mark, kept across restarts (stop-marks.ts). */
  stopMarks: StopMarks;
  /** The silence check's times ({@link SILENCE} by default; tests shorten them). */
  silence?: { askAfterMs: number; offlineAfterMs: number; checkEveryMs: number };
}

/** Counts of what the link dropped, for metrics and tests (the gate counts what it refuses). */
export interface Vda5050LinkStats {
  /** Messages on a topic of an identity no robot is bound to. */
  unbound: number;
  /** Messages the link could not map after the gate passed them. */
  unmapped: number;
  /** Unread state or visualization messages replaced by a newer one. */
  coalesced: number;
  /** Outbound messages dropped from a full per-robot lane (resent later). */
  publishDropped: number;
}

export class Vda5050Link implements RobotLink {
  private readonly listeners = new Set<RobotLinkListener>();
  /** Listeners with telemetry hooks; a new array tells every robot to rebuild its sinks. */
  private telemetryListeners: readonly RobotLinkListener[] = [];
  private readonly robots = new Map<string, RobotEntry>();
  private readonly dirty = new Set<RobotEntry>();
  /** The rest of a state that settled acks, run after the acks' commits are issued (see onState). */
  private readonly afterAcks = new Map<RobotEntry, () => void>();
  private drainScheduled = false;
  private readPaused = false;
  private readonly prefix: string;
  private readonly frame: MapFrame;
  private readonly now: () => number;
  private readonly queue: PublishQueue;
  private readonly counts = { unbound: 0, unmapped: 0, coalesced: 0 };
  private readonly gate: InboundGate;
  private readonly unlistenIdentities: () => void;
  private requestSeq = 0;
  private subscribed = false;
  private readonly readyWaiters = new Set<() => void>();
  private lastError = '';
  /** The instantActions array's name: `instantActions` in the 1.x and 2.0 schemas, `actions` from 2.1 on. */
  private readonly actionsKey: 'instantActions' | 'actions';
  /** The names of a node's deviation radius for this version (outbound.ts). */
  private readonly deviationKeys: readonly DeviationKey[];
  private closed = false;
  private readonly silence: { askAfterMs: number; offlineAfterMs: number; checkEveryMs: number };
  private readonly silenceTimer: NodeJS.Timeout;
  /** When this link started: a command issued before was this process's predecessor's (delivery.ts, `withhold`). */
  private readonly startedAtMs: number;

  private constructor(
    private readonly session: MasterSession,
    private readonly opts: Vda5050LinkOptions,
  ) {
    this.prefix = topicPrefix(opts.broker.interfaceName, opts.broker.version);
    this.frame = opts.frame ?? new MapFrame();
    this.gate = opts.gate ?? createInboundGate({ version: opts.broker.version, log: opts.log });
    const [major, minor] = opts.broker.version.split('.').map(Number);
    this.actionsKey = (major ?? 2) < 2 || ((major ?? 2) === 2 && (minor ?? 0) === 0) ? 'instantActions' : 'actions';
    this.deviationKeys = deviationKeysOf(opts.broker.version);
    this.now = opts.now ?? Date.now;
    this.startedAtMs = this.now();
    // QoS 0 (VDA 5050); false asks for a drain. A message dropped on the way may have carried a command.
    this.queue = new PublishQueue((p, robotId) => {
      const dropped = session.droppedCount;
      const ok = session.publish(p.topic, p.payload);
      if (session.droppedCount !== dropped) this.mayHaveLost(robotId);
      return ok;
    }, (robotId) => this.mayHaveLost(robotId));
    this.unlistenIdentities = opts.identities.onChange((robotId) => this.onIdentityChange(robotId));
    this.silence = opts.silence ?? SILENCE;
    this.silenceTimer = setInterval(() => this.checkSilence(), this.silence.checkEveryMs);
    // The check must not keep a process alive; close() clears it.
    this.silenceTimer.unref();
    session.start({
      robotDisconnected: (binding) => this.onRobotDisconnected(binding),
      message: (topic, payload) => this.onMessage(topic, payload),
      connect: () => this.onBrokerConnect(),
      close: () => this.onBrokerLost(),
      drain: () => this.queue.resume(),
      error: (err) => {
        // The session retries by itself; one line per distinct failure, not one per retry.
        if (err.message === this.lastError) return;
        this.lastError = err.message;
        opts.log.warn({ err: err.message, url: opts.broker.url }, 'VDA 5050 master control: broker connection failed; retrying');
      },
    });
  }

  /**
   * Starts master control: its session connects to the broker (and reconnects whenever it loses it,
   * each time subscribing to every robot's topics again) without holding up the caller, since an
   * embedded broker may start listening only once the first robot is bound.
   */
  static start(opts: Vda5050LinkOptions): Vda5050Link {
    const clientId = opts.clientId ?? `fleetgw-master-${process.pid}-${Math.random().toString(16).slice(2, 10)}`;
    return new Vda5050Link(opts.broker.openMasterSession(clientId), opts);
  }

  /** Starts master control and waits until it is subscribed (tests and tools). */
  static async connect(opts: Vda5050LinkOptions, timeoutMs = 10_000): Promise<Vda5050Link> {
    const link = Vda5050Link.start(opts);
    try {
      await link.ready(timeoutMs);
    } catch (err) {
      await link.close();
      throw err;
    }
    return link;
  }

  /** Resolves once master control is connected and subscribed; rejects after `timeoutMs`. */
  ready(timeoutMs: number): Promise<void> {
    if (this.subscribed) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.readyWaiters.delete(done);
        reject(new Error(`VDA 5050 master control: not subscribed at ${this.opts.broker.url} within ${timeoutMs} ms`));
      }, timeoutMs);
      const done = (): void => {
        clearTimeout(timer);
        resolve();
      };
      this.readyWaiters.add(done);
    });
  }

  /** Counts of dropped and refused messages. */
  stats(): Vda5050LinkStats {
    return { ...this.counts, publishDropped: this.queue.droppedCount + this.session.droppedCount };
  }

  /** Disconnects from the broker; every online robot goes offline for the listeners. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.silenceTimer);
    this.unlistenIdentities();
    for (const e of this.robots.values()) this.goOffline(e, 'the gateway is stopping');
    await this.session.close();
  }

  listen(listener: RobotLinkListener): () => void {
    if ((listener.onTelemetry || listener.telemetrySink) && !this.listeners.has(listener)) this.telemetryListeners = [...this.telemetryListeners, listener];
    this.listeners.add(listener);
    return () => {
      if (this.telemetryListeners.includes(listener)) this.telemetryListeners = this.telemetryListeners.filter((l) => l !== listener);
      this.listeners.delete(listener);
    };
  }

  isOnline(robotId: string): boolean {
    return this.robots.get(robotId)?.online === true;
  }

  /** VDA 5050 gives master control no way to tell two vehicles with one identity apart. */
  linkConflict(): LinkConflictView | null {
    return null;
  }

  /**
   * Publishes a command (docs/vda5050.md, "Mapping", "Delivery"). True once it is handled: queued;
   * acknowledged without publishing when the robot's latest state already shows its id; on a resend
   * with no state read since the last publication, a state request instead; or withheld (a
   * non-repeatable command of a previous process, delivery.ts); or, a motion command issued before a
   * stop already published, answered REJECTED `superseded_by_stop`. False when the robot is not online.
   * A command this link cannot carry is answered REJECTED (the policy path refuses those before they
   * get here).
   */
  send(robotId: string, command: Command): boolean {
    const e = this.robots.get(robotId);
    if (!e?.online || e.state === null || this.closed) return false;
    const out = outboundOf(command, e.state, this.frame, this.deviationKeys);
    if (out.kind === 'refused') {
      this.ackLater(robotId, command.commandId, { received: false, reason: `not_supported: ${out.reason}` });
      return true;
    }
    const kind = out.kind === 'order' ? 'order' : 'action';
    const actionType = out.kind === 'order' ? '' : out.actions[0]!.actionType;
    const shown = verdictOf(e.state, out.awaitId, kind, actionType);
    if (actionType === 'startPause' && command.seq > e.stopSeq) e.stopSeq = command.seq;
    if (shown !== null) {
      if (actionType === 'startPause') this.opts.stopMarks.raise(robotId, e.stopSeq);
      this.ackLater(robotId, command.commandId, shown);
      return true;
    }
    // As the gRPC agent does (src/agent/command-ledger.ts): the robot would take this after a stop
    // issued later, so it would undo that stop; a reconnect flush sends stops first.
    if (command.seq > 0n && command.seq < e.stopSeq && isMotionCommand(command)) {
      e.awaited.forget(out.awaitId);
      this.ackLater(robotId, command.commandId, { received: false, reason: 'superseded_by_stop' });
      return true;
    }
    const plan = resendPlan(e.awaited.get(out.awaitId), { states: e.statesRead, epoch: e.epoch }, Number(command.issuedAtMs) < this.startedAtMs, kind, actionType);
    if (plan === 'ask') {
      this.requestState(e);
      return true;
    }
    const withheld = plan === 'withhold';
    if (withheld && e.awaited.get(out.awaitId) === undefined) {
      this.opts.log.warn(
        { robotId, commandId: command.commandId, actionType },
        `robot ${robotId}: command ${command.commandId} (${actionType}) was issued before this gateway started and the robot's state does not show it: not published again (a second copy could be a second action); it is acknowledged if a state shows it, else its retry budget runs out with its delivery uncertain`,
      );
    }
    e.awaited.add(out.awaitId, command.commandId, kind, actionType, this.now(), { states: e.statesRead, epoch: e.epoch }, withheld);
    if (withheld) return true;
    if (out.kind === 'order' && out.mission !== null) e.rememberMission(out.awaitId, out.mission);
    this.publish(e, out);
    return true;
  }

  /** VDA 5050 has no field rules: nothing is sent (docs/vda5050.md). */
  sendFieldRules(_robotId: string, _set: FieldRuleSet): boolean {
    return false;
  }

  /**
   * Forgets the robot's link state (its fleet of record changed): it is offline until its next state,
   * which is then read with its new record.
   */
  closeSession(robotId: string, reason: string): boolean {
    const e = this.robots.get(robotId);
    if (!e) return false;
    const was = e.online;
    this.goOffline(e, reason);
    this.robots.delete(robotId);
    return was;
  }

  /**
   * Telemetry backpressure: while paused, states and visualizations still drive delivery, health
   * and missions, but no telemetry batch is made of them (each is a full snapshot: the first one
   * after resuming brings the robot's telemetry up to date).
   */
  setReadPaused(paused: boolean): void {
    this.readPaused = paused;
  }

  /** VDA 5050 telemetry carries no `seq`: there is nothing to acknowledge to the robot. */
  telemetryDurable(): void {}

  setTelemetryDurableSource(): void {}

  // ---- inbound ----

  private onMessage(topic: string, payload: Buffer): void {
    if (this.closed) return;
    const t = parseInboundTopic(this.prefix, topic);
    if (t === null) return;
    const robot = this.opts.identities.robotOf(t.manufacturer, t.serialNumber);
    if (!robot) {
      this.counts.unbound++;
      return;
    }
    // A retained message is cleared by an empty one: nothing to read.
    if (payload.length === 0) return;
    const e = this.entryOf(robot);
    e.lastHeardMs = this.now();
    switch (t.topic) {
      case 'state':
        if (e.pendingState !== null) this.counts.coalesced++;
        e.pendingState = payload;
        this.markDirty(e);
        return;
      case 'visualization':
        if (e.pendingVisualization !== null) this.counts.coalesced++;
        e.pendingVisualization = payload;
        this.markDirty(e);
        return;
      case 'connection': {
        const m = this.pass(e, 'connection', payload);
        if (m !== null) this.read(e, 'connection', () => this.onConnection(e, readConnection(m)));
        return;
      }
      case 'factsheet':
        // Read once per read like a state (a robot that repeats it costs one parse per read).
        if (e.pendingFactsheet !== null) this.counts.coalesced++;
        e.pendingFactsheet = payload;
        this.markDirty(e);
        return;
    }
  }

  /** The robot's entry; a new one when its record or binding changed since. */
  private entryOf(robot: Vda5050Robot): RobotEntry {
    const e = this.robots.get(robot.robotId);
    if (e && e.robot.fleetId === robot.fleetId && e.robot.binding.manufacturer === robot.binding.manufacturer && e.robot.binding.serialNumber === robot.binding.serialNumber) return e;
    if (e) this.closeSession(robot.robotId, 'the robot\'s record changed');
    const fresh = new RobotEntry(robot, this.now());
    fresh.stopSeq = this.opts.stopMarks.get(robot.robotId);
    this.robots.set(robot.robotId, fresh);
    return fresh;
  }

  private onIdentityChange(robotId: string): void {
    const e = this.robots.get(robotId);
    if (!e) return;
    const b = this.opts.identities.bindingOf(robotId);
    if (!b || b.manufacturer !== e.robot.binding.manufacturer || b.serialNumber !== e.robot.binding.serialNumber) {
      this.gate.forget(robotId);
      this.closeSession(robotId, 'the robot\'s VDA 5050 identity changed');
    }
  }

  /** The message as a plain object once the gate passed it; null when it refused it (counted and logged there). */
  private pass(e: RobotEntry, topic: 'connection' | 'state' | 'visualization' | 'factsheet', payload: Uint8Array): Record<string, unknown> | null {
    const v = this.gate.accept(e.robot, topic, payload);
    return v === undefined ? null : (v.message);
  }

  /** Maps a message the gate passed; one the mapping still cannot read is dropped and counted. */
  private read(e: RobotEntry, topic: string, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      if (!(err instanceof VdaMessageError)) throw err;
      this.counts.unmapped++;
      this.opts.log.debug({ robotId: e.robotId, topic, reason: err.message }, 'VDA 5050: message dropped by the mapping');
    }
  }

  private markDirty(e: RobotEntry): void {
    this.dirty.add(e);
    if (this.drainScheduled) return;
    this.drainScheduled = true;
    // Read once the session has handed over every packet of this socket read (the embedded broker
    // parses a read's packets synchronously; an MQTT client hands them over in process.nextTick
    // steps, which run before microtasks): one parse per robot per read still, and a stop's ack
    // settles in this I/O callback's turn, so its LMDB commit is issued at this turn's end like a
    // gRPC ack's, not one event-loop iteration later.
    queueMicrotask(() => this.drainInbound());
  }

  /** Reads every robot's newest state and visualization once. */
  private drainInbound(): void {
    this.drainScheduled = false;
    const batch = [...this.dirty];
    this.dirty.clear();
    for (const e of batch) {
      if (this.robots.get(e.robotId) !== e) continue;
      const state = e.pendingState;
      const vis = e.pendingVisualization;
      const factsheet = e.pendingFactsheet;
      e.pendingState = null;
      e.pendingVisualization = null;
      e.pendingFactsheet = null;
      const fm = factsheet === null ? null : this.pass(e, 'factsheet', factsheet);
      if (fm !== null) this.read(e, 'factsheet', () => this.onFactsheet(e, readFactsheet(fm)));
      const sm = state === null ? null : this.pass(e, 'state', state);
      if (sm !== null) this.read(e, 'state', () => this.onState(e, readState(sm)));
      const vm = vis === null ? null : this.pass(e, 'visualization', vis);
      if (vm !== null) this.read(e, 'visualization', () => this.onVisualization(e, readVisualization(vm)));
    }
  }

  /** A message to the robot may have been lost: what was published to it before may be published again (delivery.ts). */
  private mayHaveLost(robotId: string): void {
    const e = this.robots.get(robotId);
    if (e !== undefined) e.epoch++;
  }

  /** The broker saw the robot's session end: it is offline until it is heard again. */
  private onRobotDisconnected(binding: Vda5050Binding): void {
    const robot = this.opts.identities.robotOf(binding.manufacturer, binding.serialNumber);
    if (robot === undefined) return;
    this.mayHaveLost(robot.robotId);
    // Its next session may number its messages from 0 again, with or without a connection ONLINE.
    this.gate.sessionEnded(robot.robotId);
    const e = this.robots.get(robot.robotId);
    if (e === undefined || !e.online) return;
    this.lostRobot(e, 'the robot\'s MQTT session ended without a connection message');
  }

  /**
   * Online robots silent for `askAfterMs` are asked for their state. Silent for `offlineAfterMs`, they
   * go offline (and come back with their next state), unless the broker tells robots' session ends:
   * there a quiet robot whose session is open still reads its commands, so it stays online.
   */
  private checkSilence(): void {
    const now = this.now();
    for (const e of this.robots.values()) {
      if (!e.online) continue;
      const silent = now - e.lastHeardMs;
      if (silent >= this.silence.offlineAfterMs && !this.session.tellsRobotSessions) this.lostRobot(e, `no message from the robot for ${Math.round(silent / 1000)} s`);
      else if (silent >= this.silence.askAfterMs) this.requestState(e);
    }
  }

  /**
   * Offline without a connection message: nothing unread of it counts any more, and its next state
   * brings it back (a robot that does not use its connection topic publishes none on its return).
   */
  private lostRobot(e: RobotEntry, reason: string): void {
    e.epoch++;
    e.connection = null;
    e.pendingState = null;
    e.pendingVisualization = null;
    this.goOffline(e, reason);
  }

  private onConnection(e: RobotEntry, s: 'ONLINE' | 'OFFLINE' | 'CONNECTIONBROKEN'): void {
    // A new or ended session of the robot's: what was published to the last one may not have reached it.
    e.epoch++;
    e.connection = s;
    if (s === 'ONLINE') {
      // Its state and factsheet at once, rather than at its next periodic state.
      this.requestInfo(e);
      return;
    }
    e.pendingState = null;
    e.pendingVisualization = null;
    this.goOffline(e, s === 'OFFLINE' ? 'the robot disconnected (connection OFFLINE)' : 'the robot\'s connection broke (CONNECTIONBROKEN)');
  }

  private onFactsheet(e: RobotEntry, f: ReturnType<typeof readFactsheet>): void {
    e.factsheet = f;
    // A changed factsheet (a changed policy) reaches the listeners as another onOnline; the same one
    // again does not (each onOnline has the command service walk the robot's backlog).
    const signature = JSON.stringify(f);
    if (signature === e.factsheetSignature) return;
    e.factsheetSignature = signature;
    if (e.online) this.emitOnline(e);
  }

  private onState(e: RobotEntry, state: VdaState): void {
    this.runAfterAcks(e);
    if (e.connection === 'OFFLINE' || e.connection === 'CONNECTIONBROKEN') return;
    e.state = state;
    e.statesRead++;
    const now = this.now();
    if (!e.online) this.goOnline(e, state);
    const settled = e.awaited.settle(state, now);
    for (const { commandId, verdict } of settled) this.emitAck(e.robotId, commandId, verdict);
    // Kept once the robot has a stop, in the turn its ack's record is written (one LMDB transaction;
    // a write at the publication would hold the stop's answer behind a commit of its own). A stop not
    // acknowledged when the gateway dies is still in the outbox, and resent first after the restart.
    if (settled.some((s) => s.actionType === 'startPause')) this.opts.stopMarks.raise(e.robotId, e.stopSeq);
    if (settled.length === 0) {
      this.afterState(e, state, now);
      return;
    }
    // An ack's answer waits for its LMDB commit, which the command service issues as it hears the
    // ack: the state's telemetry, health and mission work (all of it a snapshot nobody waits on) runs
    // after that, in this turn's immediates, not before the commit starts. The robot's next message
    // runs it first if it comes sooner, so the robot's samples stay in order.
    this.afterAcks.set(e, () => this.afterState(e, state, now));
    setImmediate(() => this.runAfterAcks(e));
  }

  /** The rest of a state put off by {@link onState}, once (a no-op when it already ran or the link closed). */
  private runAfterAcks(e: RobotEntry): void {
    const rest = this.afterAcks.get(e);
    if (rest === undefined) return;
    this.afterAcks.delete(e);
    if (!this.closed) rest();
  }

  /** A state's telemetry, health report and mission progress. */
  private afterState(e: RobotEntry, state: VdaState, now: number): void {
    const mission = this.missionOf(e, state, now);
    this.telemetry(e, state, null, mission);
    const sig = healthSignature(state);
    if (sig !== e.healthSignature || now - e.healthAtMs >= HEALTH_REFRESH_MS) {
      e.healthSignature = sig;
      e.healthAtMs = now;
      const report = healthReportOf(state, state.timestampMs || now);
      this.emit((l) => l.onHealthReport?.(e.robotId, report));
    }
  }

  private onVisualization(e: RobotEntry, v: VdaVisualization): void {
    this.runAfterAcks(e);
    if (!e.online || e.state === null) {
      // A robot that is there but not known online (its connection message was lost with a broker
      // restart, and its next periodic state may be far off): ask for its state.
      if (e.connection !== 'OFFLINE' && e.connection !== 'CONNECTIONBROKEN') this.requestState(e);
      return;
    }
    const m = e.mission;
    this.telemetry(e, e.state, v, m === null || m.done ? null : sampleMission(m.statusOf(e.state, this.now())));
  }

  /** The run's progress for the sample; reports a changed status to the listeners. */
  private missionOf(e: RobotEntry, state: VdaState, now: number): MissionSampleInfo | null {
    const runId = MissionProgress.runIdOf(state.orderId);
    if (runId === null) {
      e.mission = null;
      return null;
    }
    if (e.mission === null || e.mission.orderId !== state.orderId) e.mission = new MissionProgress(state.orderId, this.missionOrderOf(e, state.orderId), state);
    const m = e.mission;
    const wasDone = m.done;
    const status = m.report(state, now);
    if (status !== null) this.emit((l) => l.onMissionStatus?.(e.robotId, status));
    return wasDone ? null : sampleMission(status ?? m.statusOf(state, now));
  }

  /**
   * The order of the robot's mission order `orderId`: the one sent, else the one rebuilt from its run's
   * MissionStart (a gateway restart forgot what was sent); null when the run is unknown, logged once.
   */
  private missionOrderOf(e: RobotEntry, orderId: string): MissionOrder | null {
    const sent = e.missionOrders.get(orderId);
    if (sent !== undefined) return sent;
    let start: MissionStart | null = null;
    try {
      start = this.opts.missionStartOf?.(e.robotId, MissionProgress.runIdOf(orderId) ?? '') ?? null;
    } catch (err) {
      // The robot's state is still read; its run only lacks what the order would tell.
      this.opts.log.error({ err, robotId: e.robotId, orderId: orderId.slice(0, 128) }, 'VDA 5050 link: the run of a mission order could not be read');
    }
    if (start !== null) {
      const order = missionOrderOf(start, this.frame);
      e.rememberMission(orderId, order);
      return order;
    }
    // Once per order id, and at most once a minute per robot (a robot may cycle through order ids).
    const now = this.now();
    if (e.unknownMissionOrder !== orderId && now - e.unknownMissionLoggedAtMs >= UNKNOWN_ORDER_LOG_MS) {
      e.unknownMissionOrder = orderId;
      e.unknownMissionLoggedAtMs = now;
      // The id is the robot's to choose: cut, so one line stays short.
      const shown = orderId.slice(0, 128);
      this.opts.log.warn({ robotId: e.robotId, orderId: shown }, `robot ${e.robotId}: runs mission order ${shown}, whose run this gateway does not know; its progress is estimated from the nodes left, without a mission id`);
    }
    return null;
  }

  private telemetry(e: RobotEntry, state: VdaState, motion: VdaVisualization | null, mission: MissionSampleInfo | null): void {
    if (this.readPaused || this.telemetryListeners.length === 0) return;
    const batch = batchOf(this.frame, state, motion, mission, this.now());
    for (const sink of this.sinksOf(e)) {
      try {
        sink(batch);
      } catch (err) {
        this.opts.log.error({ err, robotId: e.robotId }, 'VDA 5050 link: a listener failed on telemetry');
      }
    }
  }

  private sinksOf(e: RobotEntry): Array<(batch: Uint8Array) => boolean | void> {
    const listeners = this.telemetryListeners;
    if (e.sinks !== null && e.sinks.listeners === listeners) return e.sinks.sinks;
    const { robotId, fleetId } = e.robot;
    const sinks = listeners.map((l) => (l.telemetrySink !== undefined ? l.telemetrySink(robotId, fleetId) : (b: Uint8Array) => l.onTelemetry!(robotId, fleetId, b)));
    e.sinks = { listeners, sinks };
    return sinks;
  }

  // ---- online / offline ----

  private goOnline(e: RobotEntry, state: VdaState): void {
    e.online = true;
    e.healthSignature = '';
    const { robotId, fleetId } = e.robot;
    this.opts.log.info({ robotId, manufacturer: e.robot.binding.manufacturer, serialNumber: e.robot.binding.serialNumber }, `robot ${robotId}: online (VDA 5050)`);
    // Before any onOnline listener (whose outbox resend this precedes), as on the gRPC link.
    this.emit((l) => l.onLinkOpening?.(robotId, fleetId));
    if (MissionProgress.runIdOf(state.orderId) !== null && (e.mission === null || e.mission.orderId !== state.orderId)) {
      e.mission = new MissionProgress(state.orderId, this.missionOrderOf(e, state.orderId), state);
    }
    this.emitOnline(e);
  }

  private emitOnline(e: RobotEntry): void {
    const { robotId, fleetId } = e.robot;
    const active: MissionStatus[] = [];
    if (e.mission !== null && e.state !== null && !e.mission.done) {
      const st = e.mission.statusOf(e.state, this.now());
      if (st.state === 'running' || st.state === 'paused') active.push(st);
    }
    const info = {
      fleetId,
      capabilities: capabilitiesOf(e.factsheet),
      agentVersion: `VDA 5050 ${this.opts.broker.version}${e.factsheet?.seriesName ? ` (${e.factsheet.seriesName})` : ''}`.slice(0, 128),
      policy: policyOf(e.factsheet, this.frame),
      activeMissions: active,
      unsupported: UNSUPPORTED_ACTIONS,
    };
    this.emit((l) => l.onOnline?.(robotId, info));
  }

  private goOffline(e: RobotEntry, reason: string): void {
    this.runAfterAcks(e);
    this.queue.dropRobot(e.robotId);
    if (!e.online) return;
    e.online = false;
    e.sinks = null;
    this.opts.log.info({ robotId: e.robotId, reason }, `robot ${e.robotId}: offline (VDA 5050)`);
    this.emit((l) => l.onOffline?.(e.robotId, reason));
  }

  private onBrokerConnect(): void {
    this.lastError = '';
    this.session.subscribe(inboundFilters(this.prefix), (err) => {
      if (err) {
        this.opts.log.error({ err: err.message }, 'VDA 5050 master control: subscription refused');
        return;
      }
      this.subscribed = true;
      for (const w of this.readyWaiters) w();
      this.readyWaiters.clear();
    });
    this.queue.resume();
    // After a reconnect the retained connection messages bring robots back; a broker that lost them
    // (restarted without persistence) does not, so every bound robot is asked for its state.
    for (const robot of this.opts.identities.all()) this.requestState(this.entryOf(robot));
  }

  private onBrokerLost(): void {
    this.subscribed = false;
    if (this.closed) return;
    for (const e of this.robots.values()) {
      e.epoch++;
      e.connection = null;
      this.goOffline(e, 'master control lost its broker connection');
    }
  }

  // ---- outbound ----

  /**
   * Asks for the robot's state, at most once per {@link STATE_REQUEST_EVERY_MS} (a robot not known
   * online; a command published with no state read since).
   */
  private requestState(e: RobotEntry): void {
    const now = this.now();
    if (now - e.stateRequestedAtMs < STATE_REQUEST_EVERY_MS) return;
    e.stateRequestedAtMs = now;
    this.publish(e, { kind: 'instantActions', awaitId: '', urgent: false, actions: [{ actionType: 'stateRequest', actionId: `fleetgw-state-${++this.requestSeq}`, blockingType: 'NONE' }] });
  }

  /** Asks the robot for its state (and its factsheet, when none is known yet). */
  private requestInfo(e: RobotEntry): void {
    e.stateRequestedAtMs = this.now();
    // One action per message: robots process a message's actions as one chunk, and some stumble over
    // actions that end while the chunk is being processed.
    this.publish(e, { kind: 'instantActions', awaitId: '', urgent: false, actions: [{ actionType: 'stateRequest', actionId: `fleetgw-state-${++this.requestSeq}`, blockingType: 'NONE' }] });
    if (e.factsheet === null) {
      this.publish(e, { kind: 'instantActions', awaitId: '', urgent: false, actions: [{ actionType: 'factsheetRequest', actionId: `fleetgw-factsheet-${++this.requestSeq}`, blockingType: 'NONE' }] });
    }
  }

  private publish(e: RobotEntry, out: Exclude<Outbound, { kind: 'refused' }>): void {
    const topic = out.kind === 'order' ? 'order' : 'instantActions';
    const b = e.robot.binding;
    const header = {
      headerId: e.headerIds[topic],
      timestamp: new Date(this.now()).toISOString(),
      version: this.opts.broker.version,
      manufacturer: b.manufacturer,
      serialNumber: b.serialNumber,
    };
    e.headerIds[topic] = nextHeaderId(e.headerIds[topic]);
    const body = out.kind === 'order' ? { ...header, ...out.order } : { ...header, [this.actionsKey]: out.actions };
    this.queue.push(e.robotId, { topic: robotTopic(this.prefix, b, topic), payload: Buffer.from(JSON.stringify(body)) }, out.urgent);
  }

  // ---- listeners ----

  /** An ack after the current turn: the command service records a send before it hears its ack. */
  private ackLater(robotId: string, commandId: string, verdict: Verdict): void {
    setImmediate(() => this.emitAck(robotId, commandId, verdict));
  }

  private emitAck(robotId: string, commandId: string, verdict: Verdict): void {
    const ack = create(CommandAckSchema, {
      commandId,
      status: verdict.received ? CommandAck_Status.RECEIVED : CommandAck_Status.REJECTED,
      reason: verdict.received ? '' : verdict.reason,
    });
    this.emit((l) => l.onAck?.(robotId, ack));
  }

  // A throwing listener must not stop the others or the link.
  private emit(fn: (l: RobotLinkListener) => void): void {
    for (const l of this.listeners) {
      try {
        fn(l);
      } catch (err) {
        this.opts.log.error({ err }, 'VDA 5050 link: a listener failed');
      }
    }
  }
}

function sampleMission(s: MissionStatus): MissionSampleInfo {
  return { runId: s.runId, missionState: s.state, progressPct: s.progressPct, stepIndex: s.stepIndex };
}
