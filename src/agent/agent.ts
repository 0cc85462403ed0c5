/**
 * RobotAgent: the robot side of the robot link, reusable by field robots (it only needs the proto
 * and grpc-js). It keeps one authenticated control stream (Connect) to the gateway, reconnecting
 * with capped, jittered backoff; sends Hello; applies each command at most once and acks it. Once
 * welcomed it opens a second stream for telemetry (PublishTelemetry, see TelemetryPublisher) on the
 * same connection, so telemetry backpressure never delays acks.
 *
 * Telemetry policy: samples are encoded at once and queued (bounded, drop-oldest, counted, see
 * TelemetryQueue). They are written while the telemetry stream is open and writable; when grpc-js
 * reports backpressure the agent waits for 'drain', so a slow gateway slows the queue, not memory.
 *
 * Command policy: see CommandProcessor (at most once per id, in order, bounded). Acks are written on
 * the stream current when the decision is made; an ack lost with a dropped stream is re-sent when
 * the gateway resends the command.
 */
import { randomUUID } from 'node:crypto';
import { create, toBinary, type MessageInitShape } from '@bufbuild/protobuf';
import { Client, credentials, Metadata, status, type ClientDuplexStream, type StatusObject } from '@grpc/grpc-js';
import {
  CommandResultSchema,
  MissionStatusSchema,
  type HealthReport,
  ObjectDetectionsSchema,
  RobotMessageSchema,
  type CommandPolicy,
  type FieldRuleSet,
  type GatewayMessage,
  type MissionStatus,
  type RobotMessage,
  type Welcome,
} from '../gen/fleetgw/v1/robot_link_pb.js';
import { TelemetrySampleSchema, type TelemetryBatch, type TelemetrySample } from '../gen/fleetgw/v1/telemetry_pb.js';
import { CONNECT_PATH, connectClientCodec, ROBOT_ID_METADATA } from '../protocol/service.js';
import { Backoff } from './backoff.js';
import type { Decision } from './command-ledger.js';
import { CommandProcessor, type CommandHandler } from './command-processor.js';
import { HealthReporter, type HealthState } from './health-reporter.js';
import { encodeSample, type SampleInput } from './sample-encoder.js';
import { TelemetryPublisher } from './telemetry-publisher.js';
import { TelemetryQueue } from './telemetry-queue.js';
import { UnackedBatches } from './telemetry-unacked.js';

export const AGENT_VERSION = 'fleetgw-agent-ts/0.1.0';
/** The longest planned-restart hold the agent accepts unless told otherwise (`maxRestartHoldMs`). */
export const DEFAULT_MAX_RESTART_HOLD_MS = 300_000;

export type { CommandHandler, CommandResult } from './command-processor.js';

/** What a robot did with a field rule set: obeys it from now on, or could not apply it (and keeps the previous one). */
export type FieldRulesOutcome = { applied: true } | { applied: false; error: string };

export interface RobotAgentOptions {
  /** Gateway robot-link address, `host:port`. */
  address: string;
  robotId: string;
  robotToken: string;
  /**
   * Sent in every Hello so the gateway can tell this agent's reconnects from a second process using
   * the same credentials (docs/robot-link.md, "Link conflicts"). Default: a random UUID per agent
   * object. Give one only to keep it stable across objects of one process; never derive it from the token.
   */
  instanceId?: string;
  /** PEM root certificate for TLS; absent or null: plaintext (loopback gateways only). */
  tlsRootCert?: Buffer | null;
  agentVersion?: string;
  /** Action capabilities advertised in Hello. */
  capabilities?: readonly string[];
  /** Applies a command. Called at most once per command id. */
  onCommand: CommandHandler;
  /**
   * Applies the fleet's field rule set (docs/field-rules.md), replacing the one held. Called in link
   * order, synchronously, before any command that follows it on the link is handed to `onCommand`.
   * The agent answers the gateway with the outcome. Without a handler the agent applies an empty set
   * and answers any other that it cannot apply field rules (the gateway reports it `rejected`).
   */
  onFieldRules?(set: FieldRuleSet): FieldRulesOutcome;
  onConnected?(welcome: Welcome): void;
  onDisconnected?(reason: { code: number; details: string }): void;
  /** Outbound telemetry bound in samples (default 4096; oldest dropped when full). */
  maxQueuedSamples?: number;
  /** Most samples per TelemetryBatch message (default 1000). */
  maxBatchSamples?: number;
  /**
   * Sent telemetry batches kept until the gateway says they are durable, for resending after a
   * reconnect (default 4096 batches and 16 MiB; oldest dropped and counted when full).
   */
  maxUnackedBatches?: number;
  maxUnackedBytes?: number;
  /** Command ids remembered for de-duplication (default 1024). */
  commandMemory?: number;
  /** Commands that may wait for the handler (default 256). */
  maxPendingCommands?: number;
  /** Highest applied command seq restored from the robot's own storage (default 0). */
  lastAppliedSeq?: bigint;
  reconnect?: { initialMs?: number; maxMs?: number };
  /** Client keepalive ping interval (default 5000 ms) and ping timeout (default 3000 ms). */
  keepaliveTimeMs?: number;
  keepaliveTimeoutMs?: number;
  /**
   * Use a TCP connection of this agent's own. By default grpc-js shares one connection between
   * agents of one process with the same target (what a simulator of many robots wants).
   */
  dedicatedConnection?: boolean;
  /**
   * Opt-in "stop on link loss": `onLinkLoss` runs once when the control stream has not been
   * connected for `afterMs` (from start() or from the last disconnect); connecting again re-arms it.
   * A silently dead network is noticed only after the keepalive (time + timeout), so the worst case
   * is keepaliveTimeMs + keepaliveTimeoutMs + afterMs (docs/robot-link.md).
   */
  linkLoss?: { afterMs: number; onLinkLoss(): void };
  /**
   * The longest link-loss hold a gateway's planned-restart notice (GatewayRestarting) may ask for
   * (default 300000 ms; 0 ignores the notice). After a notice, a link lost within the hold fires
   * `onLinkLoss` only once it has been down for the longer of `afterMs` and what is left of the
   * hold; connecting again ends the hold (docs/robot-link.md, "Planned gateway restarts").
   */
  maxRestartHoldMs?: number;
  /** The command policy advertised in Hello; without one the gateway refuses policy-bound commands (mode, actions, settings, go-to, config). */
  policy?: CommandPolicy;
  /** Mission runs active now, re-announced in every Hello so a reconnect re-syncs the gateway. */
  activeMissions?: () => MissionStatus[];
  /** How often the full health report goes out while it does not change (default 10000 ms; docs/faults.md). */
  healthReportPeriodMs?: number;
  log?: (line: string) => void;
}

export interface AgentStats {
  connected: boolean;
  connects: number;
  samplesSent: number;
  batchesSent: number;
  samplesQueued: number;
  samplesDropped: number;
  /** Batches sent and not yet acknowledged as durable by the gateway. */
  batchesUnacked: number;
  /** Highest batch seq written (the gateway acknowledges up to it). */
  lastBatchSeq: number;
  /** Batches written again after a reconnect. */
  batchesResent: number;
  /** Samples of sent batches dropped before they were acknowledged (the unacked bound was hit). */
  samplesUnackedDropped: number;
  commandsApplied: number;
  commandsRejected: number;
  duplicateCommands: number;
  /** Planned-restart notices the gateway sent this agent (each one held its link-loss reaction). */
  restartHolds: number;
}

type Stream = ClientDuplexStream<RobotMessage | Uint8Array, GatewayMessage>;

export class RobotAgent {
  private readonly client: Client;
  private readonly queue: TelemetryQueue;
  private readonly telemetry: TelemetryPublisher;
  private readonly unacked: UnackedBatches;
  private readonly commands: CommandProcessor;
  private readonly backoff: Backoff;
  private readonly log: (line: string) => void;
  private stream: Stream | null = null;
  private welcomed = false;
  private running = false;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private linkLossTimer: NodeJS.Timeout | null = null;
  private connects = 0;
  private restartHolds = 0;
  /** Until when (performance.now()) a planned gateway restart holds the link-loss reaction; 0: no hold. */
  private holdUntil = 0;
  private readonly health: HealthReporter;
  /** This agent's identity towards the gateway (Hello.instance_id), fixed for its lifetime. */
  readonly instanceId: string;

  constructor(private readonly opts: RobotAgentOptions) {
    this.log = opts.log ?? (() => {});
    this.instanceId = opts.instanceId ?? randomUUID();
    this.queue = new TelemetryQueue(opts.maxQueuedSamples ?? 4096);
    this.commands = new CommandProcessor(opts.onCommand, (id, d) => this.sendAck(id, d), (line) => this.log(`agent ${opts.robotId}: ${line}`), {
      memory: opts.commandMemory ?? 1024,
      maxPending: opts.maxPendingCommands ?? 256,
      lastAppliedSeq: opts.lastAppliedSeq ?? 0n,
    });
    this.backoff = new Backoff(opts.reconnect?.initialMs ?? 250, opts.reconnect?.maxMs ?? 10_000);
    const creds = opts.tlsRootCert ? credentials.createSsl(opts.tlsRootCert) : credentials.createInsecure();
    this.client = new Client(opts.address, creds, {
      'grpc.keepalive_time_ms': opts.keepaliveTimeMs ?? 5000,
      'grpc.keepalive_timeout_ms': opts.keepaliveTimeoutMs ?? 3000,
      'grpc.keepalive_permit_without_calls': 1,
      // Our own backoff paces stream attempts; keep the channel's connection backoff in step with it
      // (its default grows to 120 s, which would outlast ours).
      'grpc.initial_reconnect_backoff_ms': opts.reconnect?.initialMs ?? 250,
      'grpc.max_reconnect_backoff_ms': opts.reconnect?.maxMs ?? 10_000,
      'grpc.use_local_subchannel_pool': opts.dedicatedConnection ? 1 : 0,
      // grpc-js keeps every message of a call in a retry buffer until the call commits (the server's
      // headers or first message arrive, or 1 MiB is buffered). A telemetry stream to a server that
      // sends headers only with its final receipt (older gateways) would hold up to 1 MiB
      // per robot for the stream's life. A zero budget commits each call at its first message, so
      // sent messages are freed as soon as they are written. `grpc.enable_retries: 0` does not do
      // this in grpc-js 1.14 (uncommitted calls keep their messages either way). Cost: a stream the
      // server refuses before reading it is not retried transparently; the agent's own reconnect
      // (backoff above) covers that.
      'grpc.per_rpc_retry_buffer_size': 0,
    });
    this.unacked = new UnackedBatches(opts.maxUnackedBatches ?? 4096, opts.maxUnackedBytes ?? 16 * 1024 * 1024);
    this.health = new HealthReporter((report) => this.sendHealthReport(report), opts.healthReportPeriodMs);
    this.telemetry = new TelemetryPublisher(this.client, () => this.metadata(), this.queue, opts.maxBatchSamples ?? 1000, (line) =>
      this.log(`agent ${opts.robotId}: ${line}`), this.unacked);
  }

  get robotId(): string {
    return this.opts.robotId;
  }

  /** True between the gateway's Welcome and the end of that stream. */
  get connected(): boolean {
    return this.welcomed;
  }

  /** Highest command seq the handler accepted (persist it to restore dedup across restarts). */
  get lastAppliedSeq(): bigint {
    return this.commands.lastAppliedSeq;
  }

  /** Starts connecting (and reconnecting until stop()). */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.armLinkLoss();
    this.connect();
  }

  /**
   * Half-closes the telemetry stream (waiting briefly for the gateway to read it), then the control
   * stream, and closes the channel.
   */
  async stop(): Promise<void> {
    this.running = false;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    if (this.linkLossTimer) clearTimeout(this.linkLossTimer);
    this.reconnectTimer = null;
    this.linkLossTimer = null;
    this.health.stop();
    await this.telemetry.finish(1000);
    const s = this.stream;
    if (s) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => {
          s.cancel();
          resolve();
        }, 1000);
        s.once('status', () => {
          clearTimeout(t);
          resolve();
        });
        s.end();
      });
    }
    this.client.close();
  }

  /** Queues protobuf-es samples (or a whole batch) for sending. */
  sendTelemetry(batch: TelemetryBatch | readonly TelemetrySample[]): void {
    const samples = Array.isArray(batch) ? (batch as readonly TelemetrySample[]) : (batch as TelemetryBatch).samples;
    for (const s of samples) this.queue.push(toBinary(TelemetrySampleSchema, s));
    this.telemetry.pump();
  }

  /** Queues plain samples, encoded with the fast encoder (same wire bytes as sendTelemetry). */
  sendSamples(samples: readonly SampleInput[]): void {
    for (const s of samples) this.queue.push(encodeSample(s));
    this.telemetry.pump();
  }

  stats(): AgentStats {
    return {
      connected: this.welcomed,
      connects: this.connects,
      restartHolds: this.restartHolds,
      ...this.telemetry.counters,
      ...this.commands.counters,
      samplesQueued: this.queue.length,
      samplesDropped: this.queue.dropped,
      batchesUnacked: this.unacked.length,
      lastBatchSeq: this.telemetry.lastSeq,
      batchesResent: this.unacked.resentBatches,
      samplesUnackedDropped: this.unacked.droppedSamples,
    };
  }

  /** Call metadata of both streams: the robot id and its token. */
  private metadata(): Metadata {
    const md = new Metadata();
    md.set(ROBOT_ID_METADATA, this.opts.robotId);
    md.set('authorization', `Bearer ${this.opts.robotToken}`);
    return md;
  }

  private connect(): void {
    this.reconnectTimer = null;
    if (!this.running) return;
    const stream: Stream = this.client.makeBidiStreamRequest(CONNECT_PATH, connectClientCodec.serialize, connectClientCodec.deserialize, this.metadata(), {});
    this.stream = stream;
    this.welcomed = false;
    stream.on('data', (msg: GatewayMessage) => this.onMessage(stream, msg));
    // 'status' always ends a call; 'error' repeats non-OK statuses and only needs a listener.
    stream.on('error', () => {});
    stream.on('status', (st: StatusObject) => this.onEnded(stream, st));
    const hello = create(RobotMessageSchema, {
      body: {
        case: 'hello',
        value: {
          agentVersion: this.opts.agentVersion ?? AGENT_VERSION,
          capabilities: [...(this.opts.capabilities ?? [])],
          lastAppliedSeq: this.commands.lastAppliedSeq,
          ...(this.opts.policy !== undefined ? { policy: this.opts.policy } : {}),
          activeMissions: this.opts.activeMissions?.() ?? [],
          instanceId: this.instanceId,
        },
      },
    });
    stream.write(hello);
  }

  private onMessage(stream: Stream, msg: GatewayMessage): void {
    if (stream !== this.stream) return;
    const body = msg.body;
    if (body.case === 'welcome') {
      this.welcomed = true;
      this.connects++;
      this.backoff.reset();
      this.holdUntil = 0;
      if (this.linkLossTimer) clearTimeout(this.linkLossTimer);
      this.linkLossTimer = null;
      this.log(`agent ${this.opts.robotId}: connected`);
      this.telemetry.start();
      this.health.onConnected();
      this.opts.onConnected?.(body.value);
    } else if (body.case === 'command') {
      this.commands.handle(body.value);
    } else if (body.case === 'fieldRules') {
      this.applyFieldRules(stream, body.value);
    } else if (body.case === 'restarting') {
      this.holdForRestart(body.value.holdMs);
    }
  }

  private holdForRestart(holdMs: number): void {
    const max = this.opts.maxRestartHoldMs ?? DEFAULT_MAX_RESTART_HOLD_MS;
    const hold = Math.min(holdMs, max);
    if (hold <= 0) return;
    this.restartHolds++;
    this.holdUntil = performance.now() + hold;
    // The gateway is coming back: retry from the shortest delay rather than wherever the backoff was.
    this.backoff.reset();
    this.log(`agent ${this.opts.robotId}: gateway restarting; link loss held for ${hold} ms`);
  }

  private applyFieldRules(stream: Stream, set: FieldRuleSet): void {
    let outcome: FieldRulesOutcome;
    try {
      // Without a handler the robot cannot obey a zone, but an empty set asks nothing of it.
      outcome = this.opts.onFieldRules
        ? this.opts.onFieldRules(set)
        : set.rules.length === 0 ? { applied: true } : { applied: false, error: 'this robot does not apply field rules' };
    } catch (err: unknown) {
      outcome = { applied: false, error: `field rules handler failed: ${err instanceof Error ? err.message : String(err)}` };
    }
    if (!outcome.applied) this.log(`agent ${this.opts.robotId}: field rule set ${set.version} not applied: ${outcome.error}`);
    const ack = { version: set.version, applied: outcome.applied, error: outcome.applied ? '' : outcome.error.slice(0, 500) };
    stream.write(create(RobotMessageSchema, { body: { case: 'fieldRuleAck', value: ack } }));
  }

  private onEnded(stream: Stream, st: StatusObject): void {
    if (stream !== this.stream) return;
    const wasConnected = this.welcomed;
    this.stream = null;
    this.welcomed = false;
    this.telemetry.stop();
    this.health.onDisconnected();
    const reason = { code: st.code, details: st.details };
    if (wasConnected) this.armLinkLoss();
    if (st.code !== status.OK || this.running) this.log(`agent ${this.opts.robotId}: stream ended (${st.code} ${st.details})`);
    this.opts.onDisconnected?.(reason);
    if (!this.running) return;
    const delay = this.backoff.next();
    this.reconnectTimer = setTimeout(() => this.connect(), delay);
  }

  private armLinkLoss(): void {
    const ll = this.opts.linkLoss;
    if (!ll || this.linkLossTimer) return;
    const held = this.holdUntil > 0 ? this.holdUntil - performance.now() : 0;
    this.linkLossTimer = setTimeout(() => {
      this.linkLossTimer = null;
      if (!this.welcomed && this.running) ll.onLinkLoss();
    }, Math.max(ll.afterMs, held));
  }

  /**
   * Reports the outcome of a request/response command (config, onboard settings) after its ack.
   * Returns false when not connected: the gateway's wait then times out and the caller may retry.
   */
  sendCommandResult(result: MessageInitShape<typeof CommandResultSchema>): boolean {
    return this.sendControl(create(RobotMessageSchema, { body: { case: 'commandResult', value: create(CommandResultSchema, result) } }));
  }

  /**
   * Reports a mission run's state. Returns false when not connected; the robot's current runs are
   * re-announced in the next Hello (`activeMissions`), so nothing is lost for the gateway's view.
   */
  sendMissionStatus(status: MessageInitShape<typeof MissionStatusSchema>): boolean {
    return this.sendControl(create(RobotMessageSchema, { body: { case: 'missionStatus', value: create(MissionStatusSchema, status) } }));
  }

  /**
   * Sets the robot's health state (every active fault, each device's health). The agent reports it
   * on the control stream after every connect, at once on a change and periodically (docs/faults.md).
   */
  setHealth(state: HealthState): void {
    this.health.set(state);
  }

  private sendHealthReport(report: HealthReport): boolean {
    return this.sendControl(create(RobotMessageSchema, { body: { case: 'healthReport', value: report } }));
  }

  /**
   * Sends one perception frame's object detections on the control stream (false while not connected:
   * detections are a live view, so the caller drops them rather than queueing stale ones).
   */
  sendObjectDetections(detections: MessageInitShape<typeof ObjectDetectionsSchema>): boolean {
    return this.sendControl(create(RobotMessageSchema, { body: { case: 'objectDetections', value: create(ObjectDetectionsSchema, detections) } }));
  }

  // Control messages bypass the telemetry queue: they are small and must not wait behind samples.
  private sendControl(msg: RobotMessage): boolean {
    const s = this.stream;
    if (!s || !this.welcomed) return false;
    s.write(msg);
    return true;
  }

  private sendAck(commandId: string, d: Decision): void {
    const s = this.stream;
    if (!s || !this.welcomed) return;
    s.write(create(RobotMessageSchema, { body: { case: 'ack', value: { commandId, status: d.status, reason: d.reason } } }));
  }
}
