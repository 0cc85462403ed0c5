/**
 * One robot's PublishTelemetry stream on the gateway: raw TelemetryBatch bytes in, receipts out. It
 * lives inside the robot's control session (RobotSession): it is accepted only while that session is
 * online and is ended when the session ends, so telemetry never outlives the control link that
 * authorizes it.
 *
 * Receipts (docs/robot-link.md, "Acknowledged telemetry"): once the robot has sent a batch with a
 * `seq` (wherever it stands in the batch's bytes: batch-seq.ts), the ingest's durable points for this
 * robot are written to it as receipts (`durable_seq`, `epoch`). A robot that never sends a `seq` (an
 * agent built when the call returned one receipt) gets only the final receipt, after it half-closes,
 * so its client-streaming call keeps working.
 *
 * Pausing it (telemetry backpressure) holds only this HTTP/2 stream's flow-control window; Node's
 * HTTP/2 returns the connection-level window at once, so the control stream on the same connection
 * keeps flowing.
 *
 * Reading: the call's HTTP/2 stream is read directly (telemetry-frames.ts, http2-chunk-tap.ts: the
 * fast path) when it can be; otherwise through grpc-js ('data' on the call). For well-formed streams both deliver the
 * same bytes in the same order, end with the same receipt, and pause the same HTTP/2 stream. The fast
 * path is stricter with malformed framing: a stream that ends inside a message, or a message marked
 * compressed on a stream without `grpc-encoding`, ends with INTERNAL (grpc-js drops the partial
 * message silently, and passes the marked one on raw). After such an error the rest of the stream is
 * read and discarded until the robot, told the status, stops.
 *
 * Response headers go out as soon as the stream is accepted, not with the final receipt: a gRPC
 * client keeps every message of a call in its retry buffer until the call "commits" (headers or a
 * message arrive), so a long stream without early headers costs grpc-js agents up to 1 MiB each
 * (1,000 simulated robots more than doubled their memory in 90 s: bench/notes/telemetry-ingest.md,
 * "Agent memory").
 */
import { create } from '@bufbuild/protobuf';
import { Metadata, status, type ServerDuplexStream } from '@grpc/grpc-js';
import { TelemetryReceiptSchema, type TelemetryReceipt } from '../gen/fleetgw/v1/robot_link_pb.js';
import { GrpcMessageReader } from './grpc-message-reader.js';
import { tapChunks, type ChunkTap } from './http2-chunk-tap.js';
import { BatchSeqReader } from '../telemetry/ingest/index.js';
import { MAX_ROBOT_MESSAGE_BYTES } from './limits.js';
import { takeTelemetryFrames } from './telemetry-frames.js';

export type TelemetryCall = ServerDuplexStream<Uint8Array, TelemetryReceipt>;

/** Shared by every stream (one thread reads one batch at a time); read only until a stream is sequenced. */
const seqReader = new BatchSeqReader();

export class TelemetryStream {
  private done = false;
  /** A number, not a bigint: a bigint increment per message is an allocation per message. */
  private batches = 0;
  /** The robot sends `seq`: it reads receipts while the stream is open. */
  private sequenced = false;
  private lastReceipt: { epoch: number; seq: number } | null = null;
  /** The fast path's framing reader (null: grpc-js reads); closed when the stream is done. */
  private reader: GrpcMessageReader | null = null;
  /** The HTTP/2 stream's reader (fast path); null: read through grpc-js. */
  private tap: ChunkTap | null = null;
  /**
   * How this stream is read: 'fast' (directly), or why it is read through grpc-js: 'compressed'
   * (the robot compresses; grpc-js decompresses), 'closing', 'unavailable' (grpc-js changed shape).
   */
  readonly readPath: 'fast' | 'compressed' | 'closing' | 'unavailable';

  /**
   * @param onBatch receives each batch's raw bytes, valid only during the call (on the fast path it
   *   may be a view into a buffer reused for a later batch: grpc-message-reader.ts); copy what is kept.
   *   It returns whether a listener found a `seq` in the batch (undefined: none looked; then the stream
   *   looks itself).
   * @param onDone runs once, whatever ended the stream.
   * @param onSequenced runs once, at the first batch with a `seq` (the link then sends the robot
   *   its current durable point, so a resending agent learns at once what the gateway already holds).
   */
  constructor(
    private readonly call: TelemetryCall,
    private readonly onBatch: (batch: Uint8Array) => boolean | undefined,
    private readonly onDone: (stream: TelemetryStream) => void,
    private readonly onSequenced: () => void = () => {},
  ) {
    call.sendMetadata(new Metadata());
    const taken = takeTelemetryFrames(call);
    if (taken.kind === 'taken') {
      this.readPath = 'fast';
      const reader = new GrpcMessageReader(MAX_ROBOT_MESSAGE_BYTES, (batch) => this.receive(batch));
      this.reader = reader;
      this.tap = tapChunks(taken.stream, (chunk) => {
        if (this.done) return;
        const bad = reader.push(chunk);
        if (bad !== null) this.finish({ code: status[bad.code], details: bad.details });
      }, () => {
        // The robot half-closed: everything it wrote has been read, so the receipt is exact.
        if (reader.atBoundary) this.finish(null);
        else this.finish({ code: status.INTERNAL, details: 'the telemetry stream ended inside a message' });
      });
    } else {
      this.readPath = taken.kind;
      call.on('data', (batch: Uint8Array) => this.receive(batch));
      call.on('end', () => this.finish(null));
    }
    call.on('cancelled', () => this.markDone());
    call.on('error', () => this.markDone());
    call.on('close', () => this.markDone());
  }

  /** Stops or resumes reading; HTTP/2 flow control then holds the robot's further telemetry writes. */
  setPaused(paused: boolean): void {
    if (this.done) return;
    const reading = this.tap ?? this.call;
    if (paused) reading.pause();
    else reading.resume();
  }

  private receive(batch: Uint8Array): void {
    if (this.done) return;
    this.batches++;
    // The ingest reads the batch's seq as it takes it and says what it found: walked once per batch.
    // Only without a listener that looked is the batch walked here.
    const read = this.onBatch(batch);
    if (!this.sequenced && (read ?? seqReader.read(batch))) {
      this.sequenced = true;
      this.onSequenced();
    }
  }

  /**
   * Tells the robot that its batches of `epoch` up to `seq` are durable. Only to robots that send
   * `seq`; a receipt equal to the last one is not repeated. Receipts are small and at most about one
   * per robot per store insert, so the write's own buffering is their bound.
   */
  durable(epoch: number, seq: number): void {
    if (this.done || !this.sequenced) return;
    const last = this.lastReceipt;
    if (last !== null && last.epoch === epoch && last.seq >= seq) return;
    this.lastReceipt = { epoch, seq };
    this.call.write(create(TelemetryReceiptSchema, { batches: BigInt(this.batches), durableSeq: BigInt(seq), epoch: BigInt(epoch) }));
  }

  /** Ends the stream with an error status (its control session ended, or a newer stream replaced it). */
  abort(code: status, details: string): void {
    this.finish({ code, details });
  }

  private finish(error: { code: status; details: string } | null): void {
    if (this.done) return;
    this.markDone();
    if (error) {
      this.call.emit('error', { ...error, metadata: new Metadata() });
      return;
    }
    const last = this.lastReceipt;
    this.call.write(create(TelemetryReceiptSchema, {
      batches: BigInt(this.batches),
      ...(last !== null ? { durableSeq: BigInt(last.seq), epoch: BigInt(last.epoch) } : {}),
    }));
    this.call.end();
  }

  private markDone(): void {
    if (this.done) return;
    this.done = true;
    // A robot that never ends a stream we are done with keeps it open: hold none of its bytes.
    this.reader?.close();
    this.tap?.close();
    this.onDone(this);
  }
}
