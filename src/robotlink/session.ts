/**
 * One authenticated robot stream: enforces the Hello-first protocol, routes inbound messages to the
 * registry, and reports its end exactly once whatever ended it (robot half-close, cancel, keepalive
 * failure, replacement, server shutdown).
 */
import { status, type ServerDuplexStream } from '@grpc/grpc-js';
import type { CommandAck, CommandResult, GatewayMessage, Hello, MissionStatus } from '../gen/fleetgw/v1/robot_link_pb.js';
import type { RobotRecord } from '../store/records.js';
import type { RobotInbound } from './envelope.js';

export type RobotCall = ServerDuplexStream<RobotInbound, GatewayMessage>;

/** What a session reports to its owner (the registry). */
export interface SessionHooks {
  hello(session: RobotSession, hello: Hello): void;
  telemetry(session: RobotSession, batch: Uint8Array): void;
  ack(session: RobotSession, ack: CommandAck): void;
  commandResult(session: RobotSession, result: CommandResult): void;
  missionStatus(session: RobotSession, status: MissionStatus): void;
  closed(session: RobotSession, reason: string): void;
}

export class RobotSession {
  private state: 'awaiting-hello' | 'online' | 'closed' = 'awaiting-hello';
  private helloTimer: NodeJS.Timeout | null;

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

  get isOnline(): boolean {
    return this.state === 'online';
  }

  /** Writes a message; false when the stream is no longer writable (nothing was written). */
  write(msg: GatewayMessage): boolean {
    if (this.state === 'closed' || this.call.destroyed || this.call.writableEnded) return false;
    this.call.write(msg);
    return true;
  }

  /** Stops or resumes reading; HTTP/2 flow control then holds the robot's further writes. */
  setPaused(paused: boolean): void {
    if (this.state !== 'online') return;
    if (paused) this.call.pause();
    else this.call.resume();
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
      this.hooks.telemetry(this, msg.batch);
      return;
    }
    const body = msg.message.body;
    if (body.case === 'ack') this.hooks.ack(this, body.value);
    else if (body.case === 'commandResult') this.hooks.commandResult(this, body.value);
    else if (body.case === 'missionStatus') this.hooks.missionStatus(this, body.value);
    else if (body.case === 'hello') this.fail(status.INVALID_ARGUMENT, 'Hello sent twice');
    // An empty envelope (a field this gateway does not know) is ignored for forward compatibility.
  }

  private markClosed(reason: string): void {
    if (this.state === 'closed') return;
    this.clearHelloTimer();
    this.state = 'closed';
    this.hooks.closed(this, reason);
  }

  private clearHelloTimer(): void {
    if (this.helloTimer !== null) clearTimeout(this.helloTimer);
    this.helloTimer = null;
  }
}
