/**
 * One robot's PublishTelemetry stream on the gateway: raw TelemetryBatch bytes in, a receipt out
 * when the robot half-closes it. It lives inside the robot's control session (RobotSession): it is
 * accepted only while that session is online and is ended when the session ends, so telemetry never
 * outlives the control link that authorizes it.
 *
 * Pausing it (telemetry backpressure) holds only this HTTP/2 stream's flow-control window; Node's
 * HTTP/2 returns the connection-level window at once, so the control stream on the same connection
 * keeps flowing.
 *
 * Response headers go out as soon as the stream is accepted, not with the final receipt: a gRPC
 * client keeps every message of a call in its retry buffer until the call "commits" (headers or a
 * message arrive), so a long stream without early headers costs grpc-js agents up to 1 MiB each
 * (1,000 simulated robots grew from 280 to 650 MiB in 90 s: bench/README.md, "Agent memory").
 */
import { create } from '@bufbuild/protobuf';
import { Metadata, type sendUnaryData, type ServerReadableStream, type status } from '@grpc/grpc-js';
import { TelemetryReceiptSchema, type TelemetryReceipt } from '../gen/fleetgw/v1/robot_link_pb.js';

export type TelemetryCall = ServerReadableStream<Uint8Array, TelemetryReceipt>;

export class TelemetryStream {
  private done = false;
  /** A number, not a bigint: a bigint increment per message is an allocation per message. */
  private batches = 0;

  /**
   * @param onBatch receives each batch's raw bytes (may be a view into a buffer grpc-js reuses).
   * @param onDone runs once, whatever ended the stream.
   */
  constructor(
    private readonly call: TelemetryCall,
    private readonly callback: sendUnaryData<TelemetryReceipt>,
    private readonly onBatch: (batch: Uint8Array) => void,
    private readonly onDone: (stream: TelemetryStream) => void,
  ) {
    call.sendMetadata(new Metadata());
    call.on('data', (batch: Uint8Array) => {
      if (this.done) return;
      this.batches++;
      this.onBatch(batch);
    });
    // The robot half-closed: everything it wrote has been read, so the receipt is exact.
    call.on('end', () => this.finish(null));
    call.on('cancelled', () => this.markDone());
    call.on('error', () => this.markDone());
    call.on('close', () => this.markDone());
  }

  /** Stops or resumes reading; HTTP/2 flow control then holds the robot's further telemetry writes. */
  setPaused(paused: boolean): void {
    if (this.done) return;
    if (paused) this.call.pause();
    else this.call.resume();
  }

  /** Ends the stream with an error status (its control session ended, or a newer stream replaced it). */
  abort(code: status, details: string): void {
    this.finish({ code, details });
  }

  private finish(error: { code: status; details: string } | null): void {
    if (this.done) return;
    this.markDone();
    if (error) this.callback(error);
    else this.callback(null, create(TelemetryReceiptSchema, { batches: BigInt(this.batches) }));
  }

  private markDone(): void {
    if (this.done) return;
    this.done = true;
    this.onDone(this);
  }
}
