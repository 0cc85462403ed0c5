/**
 * One authenticated robot control stream (Connect): enforces the Hello-first protocol, routes inbound
 * messages to the registry, owns the robot's telemetry stream (PublishTelemetry) while online, and
 * reports its end exactly once whatever ended it (robot half-close, cancel, keepalive failure,
 * replacement, server shutdown).
 *
 * Telemetry backpressure pauses the telemetry stream only. The control stream is paused too only for
 * an older agent that sends telemetry on Connect itself (deprecated field 2): its acks then wait
 * behind its telemetry, which is why agents should use PublishTelemetry (docs/robot-link.md).
 */
import { status, type ServerDuplexStream } from '@grpc/grpc-js';
import type { CommandAck, CommandResult, FieldRuleSetAck, GatewayMessage, HealthReport, Hello, MissionStatus, ObjectDetections } from '../gen/fleetgw/v1/robot_link_pb.js';
import type { RobotRecord } from '../store/records.js';
import type { RobotInbound } from '../protocol/envelope.js';
import { TelemetryStream, type TelemetryCall } from './telemetry-stream.js';

export type RobotCall = ServerDuplexStream<RobotInbound, GatewayMessage>;

/** What a session reports to its owner (the registry). */
export interface SessionHooks {
  hello(session: RobotSession, hello: Hello): void;
  /** Returns whether a listener found a `seq` in the batch; undefined when none looked. */
  telemetry(session: RobotSession, batch: Uint8Array): boolean | undefined;
  /** The robot's telemetry stream sent its first batch with a `seq` (it reads receipts). */
  telemetrySequenced?(session: RobotSession): void;
  ack(session: RobotSession, ack: CommandAck): void;
  commandResult(session: RobotSession, result: CommandResult): void;
  missionStatus(session: RobotSession, status: MissionStatus): void;
  healthReport(session: RobotSession, report: HealthReport): void;
  fieldRuleAck(session: RobotSession, ack: FieldRuleSetAck): void;
  objectDetections(session: RobotSession, detections: ObjectDetections): void;
  closed(session: RobotSession, reason: string): void;
}

/** A session's telemetry destinations, resolved once for the listeners and fleet they were made for. */
export interface TelemetryRoute {
  /** The registry's telemetry listener array they were made for (another array: out of date). */
  readonly listeners: readonly unknown[];
  readonly fleetId: string;
  readonly sinks: readonly ((batch: Uint8Array) => boolean | void)[];
}

export class RobotSession {
  private state: 'awaiting-hello' | 'online' | 'closed' = 'awaiting-hello';
  private helloTimer: NodeJS.Timeout | null;
  private paused = false;
  /** Set once the robot sends telemetry on this control stream (deprecated path). */
  private legacyTelemetry = false;
  private telemetryStream: TelemetryStream | null = null;
  /** Where this robot's telemetry batches go; kept up to date by the registry (registry.ts, telemetry()). */
  telemetryRoute: TelemetryRoute | null = null;

  constructor(
    readonly robot: RobotRecord,
    private readonly call: RobotCall,
    private readonly hooks: SessionHooks,
    helloTimeoutMs: number,
  ) {
    this.helloTimer = setTimeout(() => this.fail(status.DEADLINE_EXCEEDED, 'no Hello received in time'), helloTimeoutMs);
    call.on('data', (msg: RobotInbound) => this.onMessage(msg));
    // The robot half-closed: it is leaving, so finish our side too.
    call.on('end', () => this.end('robot closed the stream'));
    call.on('cancelled', () => this.markClosed('stream cancelled (connection lost or keepalive failed)'));
    call.on('error', (err: Error) => this.markClosed(`stream error: ${err.message}`));
    call.on('close', () => this.markClosed('stream closed'));
  }

  get robotId(): string {
    return this.robot.robotId;
  }

  /** The remote address of the stream's connection (`ip:port`). */
  get peer(): string {
    return this.call.getPeer();
  }

  get isOnline(): boolean {
    return this.state === 'online';
  }

  /**
   * Writes a message; false when the stream is no longer writable (nothing was written). `flushed`
   * runs once the message has been handed to the connection.
   */
  write(msg: GatewayMessage, flushed?: () => void): boolean {
    if (this.state === 'closed' || this.call.destroyed || this.call.writableEnded) return false;
    if (flushed) this.call.write(msg, flushed);
    else this.call.write(msg);
    return true;
  }

  /**
   * Stops or resumes reading telemetry; HTTP/2 flow control then holds the robot's further telemetry
   * writes. The control stream itself is paused only for a legacy agent that sends telemetry on it.
   */
  setPaused(paused: boolean): void {
    this.paused = paused;
    if (this.state !== 'online') return;
    this.telemetryStream?.setPaused(paused);
    if (this.legacyTelemetry) this.pauseControl(paused);
  }

  /**
   * Takes the robot's PublishTelemetry stream. Refused (FAILED_PRECONDITION) unless this session is
   * online; a newer telemetry stream replaces an older one (ABORTED), so a robot has at most one.
   */
  attachTelemetry(call: TelemetryCall): TelemetryStream | null {
    if (this.state !== 'online') {
      call.emit('error', { code: status.FAILED_PRECONDITION, details: 'the robot control stream (Connect) is not online' });
      return null;
    }
    const previous = this.telemetryStream;
    const stream = new TelemetryStream(call, (batch) => this.hooks.telemetry(this, batch), (ended) => {
      if (this.telemetryStream === ended) this.telemetryStream = null;
    }, () => this.hooks.telemetrySequenced?.(this));
    this.telemetryStream = stream;
    previous?.abort(status.ABORTED, 'replaced by a newer telemetry stream');
    if (this.paused) stream.setPaused(true);
    return stream;
  }

  /** The robot's telemetry batches of `epoch` up to `seq` are durable: tell it (acknowledged telemetry). */
  telemetryDurable(epoch: number, seq: number): void {
    this.telemetryStream?.durable(epoch, seq);
  }

  /** Ends the stream with status OK (server shutdown, robot leaving). */
  end(reason: string): void {
    if (this.state === 'closed') return;
    this.markClosed(reason);
    this.call.end();
  }

  /** Ends the stream with an error status the robot sees (protocol violation, replacement). */
  fail(code: status, details: string): void {
    if (this.state === 'closed') return;
    this.markClosed(details);
    // grpc-js turns an 'error' event on a server stream into the call's final status.
    this.call.emit('error', { code, details });
  }

  private onMessage(msg: RobotInbound): void {
    if (this.state === 'closed') return;
    if (this.state === 'awaiting-hello') {
      if (msg.kind !== 'message' || msg.message.body.case !== 'hello') {
        this.fail(status.INVALID_ARGUMENT, 'the first message must be a Hello');
        return;
      }
      this.clearHelloTimer();
      this.state = 'online';
      this.hooks.hello(this, msg.message.body.value);
      return;
    }
    if (msg.kind === 'telemetry') {
      if (!this.legacyTelemetry) {
        this.legacyTelemetry = true;
        if (this.paused) this.pauseControl(true);
      }
      this.hooks.telemetry(this, msg.batch);
      return;
    }
    const body = msg.message.body;
    if (body.case === 'ack') this.hooks.ack(this, body.value);
    else if (body.case === 'commandResult') this.hooks.commandResult(this, body.value);
    else if (body.case === 'missionStatus') this.hooks.missionStatus(this, body.value);
    else if (body.case === 'healthReport') this.hooks.healthReport(this, body.value);
    else if (body.case === 'fieldRuleAck') this.hooks.fieldRuleAck(this, body.value);
    else if (body.case === 'objectDetections') this.hooks.objectDetections(this, body.value);
    else if (body.case === 'hello') this.fail(status.INVALID_ARGUMENT, 'Hello sent twice');
    // An empty envelope (a field this gateway does not know) is ignored for forward compatibility.
  }

  private pauseControl(paused: boolean): void {
    if (paused) this.call.pause();
    else this.call.resume();
  }

  private markClosed(reason: string): void {
    if (this.state === 'closed') return;
    this.clearHelloTimer();
    this.state = 'closed';
    this.telemetryStream?.abort(status.ABORTED, `the robot control stream ended: ${reason}`);
    this.telemetryStream = null;
    this.hooks.closed(this, reason);
  }

  private clearHelloTimer(): void {
    if (this.helloTimer !== null) clearTimeout(this.helloTimer);
    this.helloTimer = null;
  }
}
