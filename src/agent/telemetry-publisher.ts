/**
 * The agent's telemetry stream (PublishTelemetry), kept apart from the control stream (Connect) so
 * that a gateway holding back telemetry never holds back acks, command results or mission status.
 *
 * Lifecycle: opened when the control stream is welcomed, dropped when it ends (the gateway ends the
 * telemetry stream then too). If the telemetry stream ends while the control stream is up (the
 * gateway replaced it, or the open raced the Welcome), it is reopened after a capped backoff; queued
 * samples wait in the bounded TelemetryQueue meanwhile. Writes respect HTTP/2 flow control: after a
 * write that reports backpressure, nothing more is written until 'drain'.
 *
 * Acknowledged delivery (docs/robot-link.md "Acknowledged telemetry"): each batch
 * carries `seq` (1, 2, ... per process) and this process's random `epoch`; written batches stay in
 * the bounded UnackedBatches until a receipt's `durable_seq` covers them, and every one still held
 * is written again first when the stream reopens (after a gateway restart or a lost connection).
 */
import { status as grpcStatus, type Client, type ClientDuplexStream, type Metadata, type StatusObject } from '@grpc/grpc-js';
import { randomInt } from 'node:crypto';
import type { TelemetryReceipt } from '../gen/fleetgw/v1/robot_link_pb.js';
import { PUBLISH_TELEMETRY_PATH, publishTelemetryClientCodec } from '../protocol/service.js';
import { Backoff } from './backoff.js';
import type { TelemetryQueue } from './telemetry-queue.js';
import type { UnackedBatches } from './telemetry-unacked.js';

type Stream = ClientDuplexStream<Uint8Array, TelemetryReceipt>;

export class TelemetryPublisher {
  private stream: Stream | null = null;
  private waitingDrain = false;
  private active = false;
  private reopenTimer: NodeJS.Timeout | null = null;
  private readonly backoff = new Backoff(100, 5000);
  /** Samples and batches handed to the telemetry stream (first writes; resends are counted apart). */
  readonly counters = { samplesSent: 0, batchesSent: 0 };
  /** Random per publisher (so per agent process), never 0; below 2^48 so it is an exact number. */
  readonly epoch = randomInt(1, 2 ** 48);
  private seq = 0;

  constructor(
    private readonly client: Client,
    private readonly metadata: () => Metadata,
    private readonly queue: TelemetryQueue,
    private readonly maxBatchSamples: number,
    private readonly log: (line: string) => void,
    private readonly unacked: UnackedBatches,
  ) {}

  /** The highest `seq` written so far (0: none). */
  get lastSeq(): number {
    return this.seq;
  }

  /** The control stream is online: open the telemetry stream and send what is queued. */
  start(): void {
    this.active = true;
    this.backoff.reset();
    if (this.stream === null && this.reopenTimer === null) this.open();
  }

  /** The control stream ended: drop the telemetry stream (what it had not delivered is lost with it). */
  stop(): void {
    this.active = false;
    this.clearTimer();
    const s = this.stream;
    this.stream = null;
    s?.cancel();
  }

  /**
   * Half-closes the telemetry stream and waits up to `timeoutMs` for the gateway's receipt, so what
   * was written has been read; then cancels whatever is left.
   */
  async finish(timeoutMs: number): Promise<void> {
    this.active = false;
    this.clearTimer();
    const s = this.stream;
    this.stream = null;
    if (!s) return;
    await new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        s.cancel();
        resolve();
      }, timeoutMs);
      s.once('status', () => {
        clearTimeout(t);
        resolve();
      });
      // The final receipt(s) still arrive as 'data' after the half-close.
      s.end();
    });
  }

  /** Writes held batches again (after a reopen), then queued samples, while the stream accepts them. */
  pump(): void {
    const s = this.stream;
    if (!s || this.waitingDrain) return;
    for (;;) {
      const again = this.unacked.nextResend();
      if (again !== null) {
        if (!s.write(again)) {
          this.waitingDrain = true;
          return;
        }
        continue;
      }
      const next = this.queue.takeBatch(this.maxBatchSamples, this.seq + 1, this.epoch);
      if (!next) return;
      this.seq++;
      this.unacked.add(this.seq, next.batch, next.samples);
      this.counters.samplesSent += next.samples;
      this.counters.batchesSent++;
      if (!s.write(next.batch)) {
        this.waitingDrain = true;
        return;
      }
    }
  }

  private open(): void {
    this.reopenTimer = null;
    if (!this.active) return;
    const { serialize, deserialize } = publishTelemetryClientCodec;
    const stream: Stream = this.client.makeBidiStreamRequest<Uint8Array, TelemetryReceipt>(
      PUBLISH_TELEMETRY_PATH, serialize, deserialize, this.metadata(), {},
    );
    stream.on('data', (r: TelemetryReceipt) => {
      // A receipt for another epoch answers an earlier process of this robot: nothing of ours.
      if (r.durableSeq > 0n && r.epoch === BigInt(this.epoch)) this.unacked.ackUpTo(Number(r.durableSeq));
    });
    stream.on('status', (st: StatusObject) => this.onEnded(stream, st.code === grpcStatus.OK ? null : st));
    // Errors also arrive as the 'status' above; without a listener an 'error' event would throw.
    stream.on('error', () => {});
    this.stream = stream;
    this.waitingDrain = false;
    this.unacked.rewind();
    stream.on('drain', () => {
      if (stream !== this.stream) return;
      this.waitingDrain = false;
      this.pump();
    });
    this.pump();
  }

  private onEnded(stream: Stream, err: StatusObject | null): void {
    if (stream !== this.stream) return;
    this.stream = null;
    this.waitingDrain = false;
    if (!this.active) return;
    const delay = this.backoff.next();
    this.log(`telemetry stream ended (${err ? `${err.code} ${err.details}` : 'OK'}); reopening in ${delay} ms`);
    this.reopenTimer = setTimeout(() => this.open(), delay);
  }

  private clearTimer(): void {
    if (this.reopenTimer !== null) clearTimeout(this.reopenTimer);
    this.reopenTimer = null;
  }
}
