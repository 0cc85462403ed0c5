/**
 * RobotAgent: the robot side of the robot link, reusable by field robots (it only needs the proto
 * and grpc-js). It keeps one authenticated stream to the gateway, reconnecting with capped,
 * jittered backoff; sends Hello then telemetry; applies each command at most once and acks it.
 *
 * Telemetry policy: samples are encoded at once and queued (bounded, drop-oldest, counted, see
 * TelemetryQueue). They are written while the stream is connected and writable; when grpc-js
 * reports backpressure the agent waits for 'drain', so a slow gateway slows the queue, not memory.
 *
 * Command policy: commands are handled one at a time in arrival order (bounded: beyond
 * `maxPendingCommands` waiting, a new command is acked REJECTED "agent_busy" without being
 * remembered, so a resend may succeed). Acks are written on the stream current when the decision is
 * made; an ack lost with a dropped stream is re-sent when the gateway resends the command.
 */
import { create, toBinary } from '@bufbuild/protobuf';
import { Client, credentials, Metadata, status, type ClientDuplexStream, type StatusObject } from '@grpc/grpc-js';
import {
  CommandAck_Status,
  RobotMessageSchema,
  type Command,
  type GatewayMessage,
  type RobotMessage,
  type Welcome,
} from '../gen/fleetgw/v1/robot_link_pb.js';
import { TelemetrySampleSchema, type TelemetryBatch, type TelemetrySample } from '../gen/fleetgw/v1/telemetry_pb.js';
import { CONNECT_PATH, connectClientCodec, ROBOT_ID_METADATA } from '../robotlink/service.js';
import { Backoff } from './backoff.js';
import { CommandLedger, type Decision } from './command-ledger.js';
import { encodeSample, type SampleInput } from './sample-encoder.js';
import { TelemetryQueue } from './telemetry-queue.js';

export const AGENT_VERSION = 'fleetgw-agent-ts/0.1.0';

/** What the robot's command handler decides. */
export type CommandResult = { accept: true } | { accept: false; reason: string };
export type CommandHandler = (cmd: Command) => CommandResult | Promise<CommandResult>;

export interface RobotAgentOptions {
  /** Gateway robot-link address, `host:port`. */
  address: string;
  robotId: string;
  robotToken: string;
  /** PEM root certificate for TLS; absent or null: plaintext (loopback gateways only). */
  tlsRootCert?: Buffer | null;
  agentVersion?: string;
  /** Action capabilities advertised in Hello. */
  capabilities?: readonly string[];
  /** Applies a command. Called at most once per command id. */
  onCommand: CommandHandler;
  onConnected?(welcome: Welcome): void;
  onDisconnected?(reason: { code: number; details: string }): void;
  /** Outbound telemetry bound in samples (default 4096; oldest dropped when full). */
  maxQueuedSamples?: number;
  /** Most samples per TelemetryBatch message (default 1000). */
  maxBatchSamples?: number;
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
   * Opt-in "stop on link loss": `onLinkLoss` runs once when the agent has not been connected for
   * `afterMs` (from start or from the last disconnect); connecting again re-arms it.
   */
  linkLoss?: { afterMs: number; onLinkLoss(): void };
  log?: (line: string) => void;
}

export interface AgentStats {
  connected: boolean;
  connects: number;
  samplesSent: number;
  batchesSent: number;
  samplesQueued: number;
  samplesDropped: number;
  commandsApplied: number;
  commandsRejected: number;
  duplicateCommands: number;
}

type Stream = ClientDuplexStream<RobotMessage | Uint8Array, GatewayMessage>;

export class RobotAgent {
  private readonly client: Client;
  private readonly queue: TelemetryQueue;
  private readonly ledger: CommandLedger;
  private readonly backoff: Backoff;
  private readonly log: (line: string) => void;
  private stream: Stream | null = null;
  private welcomed = false;
  private waitingDrain = false;
  private running = false;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private linkLossTimer: NodeJS.Timeout | null = null;
  private commandChain: Promise<void> = Promise.resolve();
  private pendingCommands = 0;
  private readonly maxPendingCommands: number;
  private readonly counters = {
    connects: 0, samplesSent: 0, batchesSent: 0, commandsApplied: 0, commandsRejected: 0, duplicateCommands: 0,
  };

  constructor(private readonly opts: RobotAgentOptions) {
    this.log = opts.log ?? (() => {});
    this.queue = new TelemetryQueue(opts.maxQueuedSamples ?? 4096);
    // Memory must outlive every command still waiting for the handler, or a pending id could be forgotten.
    this.maxPendingCommands = Math.max(1, opts.maxPendingCommands ?? 256);
    const memory = Math.max(opts.commandMemory ?? 1024, this.maxPendingCommands + 1);
    this.ledger = new CommandLedger(memory, opts.lastAppliedSeq ?? 0n);
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
    });
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
    return this.ledger.lastAppliedSeq;
  }

  /** Starts connecting (and reconnecting until stop()). */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.armLinkLoss();
    this.connect();
  }

  /** Half-closes the stream, waits briefly for the gateway to finish it, and closes the channel. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    if (this.linkLossTimer) clearTimeout(this.linkLossTimer);
    this.reconnectTimer = null;
    this.linkLossTimer = null;
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
    this.pump();
  }

  /** Queues plain samples, encoded with the fast encoder (same wire bytes as sendTelemetry). */
  sendSamples(samples: readonly SampleInput[]): void {
    for (const s of samples) this.queue.push(encodeSample(s));
    this.pump();
  }

  stats(): AgentStats {
    return {
      connected: this.welcomed,
      ...this.counters,
      samplesQueued: this.queue.length,
      samplesDropped: this.queue.dropped,
    };
  }

  private connect(): void {
    this.reconnectTimer = null;
    if (!this.running) return;
    const md = new Metadata();
    md.set(ROBOT_ID_METADATA, this.opts.robotId);
    md.set('authorization', `Bearer ${this.opts.robotToken}`);
    const stream: Stream = this.client.makeBidiStreamRequest(CONNECT_PATH, connectClientCodec.serialize, connectClientCodec.deserialize, md, {});
    this.stream = stream;
    this.welcomed = false;
    this.waitingDrain = false;
    stream.on('data', (msg: GatewayMessage) => this.onMessage(stream, msg));
    // 'status' always ends a call; 'error' repeats non-OK statuses and only needs a listener.
    stream.on('error', () => {});
    stream.on('status', (st: StatusObject) => this.onEnded(stream, st));
    stream.on('drain', () => {
      if (stream !== this.stream) return;
      this.waitingDrain = false;
      this.pump();
    });
    const hello = create(RobotMessageSchema, {
      body: {
        case: 'hello',
        value: {
          agentVersion: this.opts.agentVersion ?? AGENT_VERSION,
          capabilities: [...(this.opts.capabilities ?? [])],
          lastAppliedSeq: this.ledger.lastAppliedSeq,
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
      this.counters.connects++;
      this.backoff.reset();
      if (this.linkLossTimer) clearTimeout(this.linkLossTimer);
      this.linkLossTimer = null;
      this.log(`agent ${this.opts.robotId}: connected`);
      this.opts.onConnected?.(body.value);
      this.pump();
    } else if (body.case === 'command') {
      this.onCommand(body.value);
    }
  }

  private onEnded(stream: Stream, st: StatusObject): void {
    if (stream !== this.stream) return;
    const wasConnected = this.welcomed;
    this.stream = null;
    this.welcomed = false;
    this.waitingDrain = false;
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
    this.linkLossTimer = setTimeout(() => {
      this.linkLossTimer = null;
      if (!this.welcomed && this.running) ll.onLinkLoss();
    }, ll.afterMs);
  }

  private pump(): void {
    const s = this.stream;
    if (!s || !this.welcomed || this.waitingDrain) return;
    const max = this.opts.maxBatchSamples ?? 1000;
    for (;;) {
      const next = this.queue.takeEnvelope(max);
      if (!next) return;
      this.counters.samplesSent += next.samples;
      this.counters.batchesSent++;
      if (!s.write(next.envelope)) {
        this.waitingDrain = true;
        return;
      }
    }
  }

  private sendAck(commandId: string, d: Decision): void {
    const s = this.stream;
    if (!s || !this.welcomed) return;
    s.write(create(RobotMessageSchema, { body: { case: 'ack', value: { commandId, status: d.status, reason: d.reason } } }));
  }

  private onCommand(cmd: Command): void {
    const seen = this.ledger.get(cmd.commandId);
    if (seen) {
      this.counters.duplicateCommands++;
      // Still being handled: its ack goes out when the handler finishes.
      if (seen.state === 'decided') this.sendAck(cmd.commandId, seen.decision);
      return;
    }
    if (this.ledger.isStale(cmd.seq)) {
      const d: Decision = { status: CommandAck_Status.REJECTED, reason: 'stale_seq' };
      this.ledger.decide(cmd.commandId, cmd.seq, d);
      this.sendAck(cmd.commandId, d);
      return;
    }
    if (this.pendingCommands >= this.maxPendingCommands) {
      this.sendAck(cmd.commandId, { status: CommandAck_Status.REJECTED, reason: 'agent_busy' });
      return;
    }
    this.ledger.begin(cmd.commandId);
    this.pendingCommands++;
    this.commandChain = this.commandChain.then(async () => {
      const d = await this.decide(cmd);
      this.pendingCommands--;
      this.ledger.decide(cmd.commandId, cmd.seq, d);
      if (d.status === CommandAck_Status.RECEIVED) this.counters.commandsApplied++;
      else this.counters.commandsRejected++;
      this.sendAck(cmd.commandId, d);
    });
  }

  private async decide(cmd: Command): Promise<Decision> {
    try {
      const r = await this.opts.onCommand(cmd);
      return r.accept
        ? { status: CommandAck_Status.RECEIVED, reason: '' }
        : { status: CommandAck_Status.REJECTED, reason: r.reason || 'rejected' };
    } catch (err) {
      this.log(`agent ${this.opts.robotId}: command handler failed: ${err instanceof Error ? err.message : String(err)}`);
      return { status: CommandAck_Status.REJECTED, reason: 'handler_error' };
    }
  }
}
