/**
 * The gateway's view of connected robots: which session is current per robot, fan-out to listeners,
 * and the RobotLink operations (send, isOnline, setReadPaused) the rest of the gateway uses.
 *
 * A robot has at most one current session. A newer session replaces the older one when its Hello
 * arrives; the old stream ends with ABORTED and emits no offline event, so listeners see
 * online -> online for a replacement and exactly one offline when the current session ends.
 * Unless the newer session is another live process with the same credentials: then the robot is in
 * a link conflict and the newer session is refused with ALREADY_EXISTS (link-conflict.ts).
 */
import type { Logger } from 'pino';
import { create } from '@bufbuild/protobuf';
import { status } from '@grpc/grpc-js';
import {
  GatewayMessageSchema, type Command, type CommandAck, type CommandResult, type FieldRuleSet, type FieldRuleSetAck, type HealthReport, type Hello, type MissionStatus, type ObjectDetections,
} from '../gen/fleetgw/v1/robot_link_pb.js';
import { announceRestart, type RestartNoticeResult } from './restart-notice.js';
import { LinkConflictTracker, type ConnectionIdentity, type LinkConflictOptions } from './link-conflict.js';
import type { LinkConflictReport, LinkConflictView, RobotLink, RobotLinkListener } from '../protocol/robot-link.js';
import type { RobotSession, SessionHooks, TelemetryRoute } from './session.js';
import type { TelemetryCall, TelemetryStream } from './telemetry-stream.js';

const MAX_CAPABILITIES = 64;
const MAX_TEXT = 128;
const INSTANCE_ID = /^[\x21-\x7e]{1,64}$/;

/** The final status of a connection refused because of a link conflict (docs/robot-link.md). */
export const LINK_CONFLICT_STATUS = status.ALREADY_EXISTS;
const LINK_CONFLICT_DETAILS =
  'link conflict: another process is connected with this robot\'s credentials; new connections for this robot are ' +
  'refused until none has been refused for a while (docs/robot-link.md, "Link conflicts")';

export class RobotRegistry implements RobotLink, SessionHooks {
  private readonly current = new Map<string, RobotSession>();
  private readonly all = new Set<RobotSession>();
  private readonly listeners = new Set<RobotLinkListener>();
  /**
   * The listeners with an onTelemetry or a telemetrySink, for the per-message path (10,000 calls a
   * second at 1,000 robots): each session keeps its sinks for this array (telemetry()), so a message
   * costs one call per listener, no probe of shapes, no lookup by robot id. Replaced, not mutated: a
   * new array is how sessions learn that their sinks are out of date.
   */
  private telemetryListeners: readonly RobotLinkListener[] = [];
  /** The identity each online session announced in its Hello. */
  private readonly identities = new WeakMap<RobotSession, ConnectionIdentity>();
  private readonly conflicts: LinkConflictTracker;
  private paused = false;

  constructor(
    private readonly log: Logger,
    conflictOptions: LinkConflictOptions = {},
  ) {
    this.conflicts = new LinkConflictTracker(conflictOptions, (robotId, cleared) => {
      this.log.info({ robotId, refusedConnections: cleared.refusedConnections }, `robot ${robotId}: link conflict cleared`);
      this.emit((l) => l.onLinkConflictCleared?.(robotId, cleared));
    });
  }

  listen(listener: RobotLinkListener): () => void {
    if ((listener.onTelemetry || listener.telemetrySink) && !this.listeners.has(listener)) this.telemetryListeners = [...this.telemetryListeners, listener];
    this.listeners.add(listener);
    return () => {
      // A new array tells every session to rebuild its sinks: only when a telemetry listener leaves.
      if (this.telemetryListeners.includes(listener)) this.telemetryListeners = this.telemetryListeners.filter((l) => l !== listener);
      return this.listeners.delete(listener);
    };
  }

  isOnline(robotId: string): boolean {
    return this.current.has(robotId);
  }

  linkConflict(robotId: string): LinkConflictView | null {
    return this.conflicts.conflict(robotId);
  }

  /** Robot ids with a current session. */
  onlineRobots(): string[] {
    return [...this.current.keys()];
  }

  send(robotId: string, command: Command): boolean {
    const session = this.current.get(robotId);
    if (!session) return false;
    return session.write(create(GatewayMessageSchema, { body: { case: 'command', value: command } }));
  }

  sendFieldRules(robotId: string, set: FieldRuleSet): boolean {
    const session = this.current.get(robotId);
    if (!session) return false;
    return session.write(create(GatewayMessageSchema, { body: { case: 'fieldRules', value: set } }));
  }

    closeSession(robotId: string, reason: string): boolean {
    const s = this.current.get(robotId);
    if (!s) return false;
    this.log.info({ robotId, reason }, `robot ${robotId}: link session closed (${reason})`);
    // UNAVAILABLE: the agent reconnects at once (its backoff was reset by the last welcome).
    s.fail(status.UNAVAILABLE, reason);
    return true;
  }

  setReadPaused(paused: boolean): void {
    if (this.paused === paused) return;
    this.paused = paused;
    for (const s of this.current.values()) {
      // A listener called from a session (it should not: the chunk tap hands held batches over later)
      // changed the decision: the newer call has applied it to every session already.
      if (this.paused !== paused) return;
      s.setPaused(paused);
    }
  }

  /**
   * Hands an authenticated PublishTelemetry stream to the robot's current control session; refused
   * with FAILED_PRECONDITION when the robot has none (telemetry needs an online control link).
   */
  attachTelemetry(robotId: string, call: TelemetryCall): TelemetryStream | null {
    const session = this.current.get(robotId);
    if (!session) {
      call.emit('error', { code: status.FAILED_PRECONDITION, details: 'the robot control stream (Connect) is not online' });
      return null;
    }
    return session.attachTelemetry(call);
  }

  /** Where the ingest's durable points come from: see setTelemetryDurableSource. */
  private durablePointOf: (robotId: string) => { epoch: number; seq: number } | undefined = () => undefined;

  setTelemetryDurableSource(source: (robotId: string) => { epoch: number; seq: number } | undefined): void {
    this.durablePointOf = source;
  }

  /** The robot's telemetry of `epoch` up to `seq` is durable: a receipt on its telemetry stream, if any. */
  telemetryDurable(robotId: string, epoch: number, seq: number): void {
    this.current.get(robotId)?.telemetryDurable(epoch, seq);
  }

  telemetrySequenced(session: RobotSession): void {
    const p = this.durablePointOf(session.robotId);
    if (p !== undefined) session.telemetryDurable(p.epoch, p.seq);
  }

  /** Tracks a freshly authenticated session (not online until its Hello). */
  add(session: RobotSession): void {
    this.all.add(session);
  }

  /** Ends every stream with status OK (graceful shutdown). */
  /** Tells every online robot that the gateway restarts within `holdMs` (restart-notice.ts). */
  announceRestart(holdMs: number, flushMs: number): Promise<RestartNoticeResult> {
    return announceRestart(this.current.values(), holdMs, flushMs);
  }

  endAll(reason: string): void {
    this.conflicts.close();
    for (const s of [...this.all]) s.end(reason);
  }

  hello(session: RobotSession, hello: Hello): void {
    const bad = validateHello(hello);
    if (bad !== null) {
      session.fail(status.INVALID_ARGUMENT, bad);
      return;
    }
    const robotId = session.robotId;
    const previous = this.current.get(robotId);
    const identity = identityOf(hello, session.peer);
    const live = previous && previous !== session ? this.identities.get(previous) ?? null : null;
    const verdict = this.conflicts.admit(robotId, session.robot.fleetId, identity, live);
    if (!verdict.admit) {
      this.refuse(session, identity, verdict.started);
      return;
    }
    this.identities.set(session, identity);
    this.current.set(robotId, session);
    if (previous && previous !== session) {
      this.log.info({ robotId }, `robot ${robotId}: newer connection replaces the current one`);
      previous.fail(status.ABORTED, 'replaced by a newer connection for this robot');
    }
    session.write(
      create(GatewayMessageSchema, {
        body: {
          case: 'welcome',
          value: { robotId, fleetId: session.robot.fleetId, serverTimeMs: BigInt(Date.now()) },
        },
      }),
    );
    // Synchronously after the Welcome and before onOnline (whose listeners resend the outbox): what
    // these write (the fleet's field rules) is ahead of every command on the ordered stream.
    this.emit((l) => l.onLinkOpening?.(robotId, session.robot.fleetId));
    session.setPaused(this.paused);
    this.log.info({ robotId, agentVersion: hello.agentVersion || 'unknown', peer: session.peer }, `robot ${robotId}: online`);
    const info = {
      fleetId: session.robot.fleetId,
      capabilities: [...hello.capabilities],
      agentVersion: hello.agentVersion,
      lastAppliedSeq: hello.lastAppliedSeq,
      ...(hello.policy !== undefined ? { policy: hello.policy } : {}),
      activeMissions: [...hello.activeMissions],
    };
    this.emit((l) => l.onOnline?.(robotId, info));
  }

  private refuse(session: RobotSession, identity: ConnectionIdentity, started: LinkConflictReport | null): void {
    const robotId = session.robotId;
    if (started) {
      this.log.error(
        { robotId, rule: started.rule },
        `robot ${robotId}: LINK CONFLICT: two processes use this robot's credentials (${describe(started.holder)} holds the link, ` +
          `${describe(started.refused)} refused; rule ${started.rule}); other connections are refused until none for ${started.clearAfterMs} ms`,
      );
      this.emit((l) => l.onLinkConflict?.(robotId, started));
    } else {
      this.log.warn({ robotId }, `robot ${robotId}: link conflict: refused a connection from ${describe(identity)}`);
    }
    session.fail(LINK_CONFLICT_STATUS, LINK_CONFLICT_DETAILS);
  }

  telemetry(session: RobotSession, batch: Uint8Array): boolean | undefined {
    let route = session.telemetryRoute;
    const fleetId = session.robot.fleetId;
    if (route === null || route.listeners !== this.telemetryListeners || route.fleetId !== fleetId) {
      route = session.telemetryRoute = this.routeOf(session.robotId, fleetId);
    }
    const sinks = route.sinks;
    let sequenced: boolean | undefined;
    for (let i = 0; i < sinks.length; i++) {
      try {
        const read = sinks[i]!(batch);
        if (typeof read === 'boolean') sequenced = read || sequenced === true;
      } catch (err) {
        this.log.error({ err, robotId: session.robotId }, 'robot link: a listener failed on telemetry');
      }
    }
    return sequenced;
  }

  /** Each telemetry listener's sink for one robot (onTelemetry bound to it when there is no telemetrySink). */
  private routeOf(robotId: string, fleetId: string): TelemetryRoute {
    const listeners = this.telemetryListeners;
    let complete = true;
    const sinks = listeners.map((l): ((batch: Uint8Array) => boolean | void) => {
      if (l.telemetrySink === undefined) return (batch) => l.onTelemetry!(robotId, fleetId, batch);
      try {
        return l.telemetrySink(robotId, fleetId);
      } catch (err) {
        // This batch misses that listener (logged by telemetry(), like a failing onTelemetry); the
        // route is not kept, so the next batch asks again instead of failing for the whole session.
        complete = false;
        return () => {
          throw err;
        };
      }
    });
    return { listeners: complete ? listeners : [], fleetId, sinks };
  }

  ack(session: RobotSession, ack: CommandAck): void {
    this.emit((l) => l.onAck?.(session.robotId, ack));
  }

  commandResult(session: RobotSession, result: CommandResult): void {
    this.emit((l) => l.onCommandResult?.(session.robotId, result));
  }

  missionStatus(session: RobotSession, status: MissionStatus): void {
    this.emit((l) => l.onMissionStatus?.(session.robotId, status));
  }

  healthReport(session: RobotSession, report: HealthReport): void {
    // Only the current session speaks for the robot: a replaced one may still deliver a stale report.
    if (this.current.get(session.robotId) !== session) return;
    this.emit((l) => l.onHealthReport?.(session.robotId, report));
  }

  fieldRuleAck(session: RobotSession, ack: FieldRuleSetAck): void {
    this.emit((l) => l.onFieldRuleAck?.(session.robotId, ack));
  }

    objectDetections(session: RobotSession, detections: ObjectDetections): void {
    // The fleet the session authenticated into: after a transfer the tracker refuses frames whose
    // fleet no longer matches the robot's record (docs/robot-admin.md).
    this.emit((l) => l.onObjectDetections?.(session.robotId, session.robot.fleetId, detections));
  }

  closed(session: RobotSession, reason: string): void {
    this.all.delete(session);
    const robotId = session.robotId;
    if (this.current.get(robotId) !== session) return;
    this.current.delete(robotId);
    this.log.info({ robotId, reason }, `robot ${robotId}: offline`);
    this.emit((l) => l.onOffline?.(robotId, reason));
  }

  // A throwing listener must not break the stream or starve the other listeners.
  private emit(fn: (l: RobotLinkListener) => void): void {
    for (const l of this.listeners) {
      try {
        fn(l);
      } catch (err) {
        this.log.error({ err }, 'robot link: a listener failed');
      }
    }
  }
}

/** A connection's identity: the agent's instance id, or for agents that send none, the connection itself. */
function identityOf(hello: Hello, peer: string): ConnectionIdentity {
  const instanceId = hello.instanceId === '' ? null : hello.instanceId;
  return { key: instanceId !== null ? `instance:${instanceId}` : `peer:${peer}`, instanceId, peer };
}

function describe(c: { instanceId: string | null; peer: string }): string {
  return c.instanceId !== null ? `instance ${c.instanceId} at ${c.peer}` : c.peer;
}

function validateHello(hello: Hello): string | null {
  if (hello.agentVersion.length > MAX_TEXT) return 'Hello.agent_version is too long';
  if (hello.instanceId !== '' && !INSTANCE_ID.test(hello.instanceId)) return 'Hello.instance_id must be 1-64 printable ASCII characters';
  if (hello.capabilities.length > MAX_CAPABILITIES) return 'Hello advertises too many capabilities';
  if (hello.capabilities.some((c) => c.length === 0 || c.length > MAX_TEXT)) return 'Hello has an empty or too long capability';
  return null;
}
