/**
 * The agent's sent-but-not-yet-durable telemetry batches: kept until the gateway's
 * receipt says they are durable (`durable_seq`), and written again, in order, after the telemetry
 * stream reopens, so a gateway crash loses nothing the agent still holds (the gateway drops the
 * batches it already had by their `seq`).
 *
 * Bound: `maxBatches` batches and `maxBytes` bytes. Policy when full: the oldest batch is dropped and
 * its samples counted in {@link droppedSamples} (the newest state matters most, and a robot must not
 * grow memory without bound while its gateway is down or not acknowledging).
 */

interface Held {
  seq: number;
  batch: Buffer;
  samples: number;
}

export class UnackedBatches {
  private readonly held: Held[] = [];
  /** Index into `held` of the first batch not yet written on the current stream. */
  private cursor = 0;
  private bytes = 0;
  /** Samples of batches dropped unacknowledged because the buffer was full. */
  droppedSamples = 0;
  /** Batches written again after a reconnect. */
  resentBatches = 0;

  constructor(
    readonly maxBatches: number,
    readonly maxBytes: number,
  ) {
    if (!Number.isInteger(maxBatches) || maxBatches < 1) throw new Error('unacked telemetry bound must be a positive integer');
  }

  get length(): number {
    return this.held.length;
  }

  get byteLength(): number {
    return this.bytes;
  }

  /** Keeps a batch that is being written for the first time (it is behind the cursor). */
  add(seq: number, batch: Buffer, samples: number): void {
    this.held.push({ seq, batch, samples });
    this.bytes += batch.length;
    this.cursor = this.held.length;
    while (this.held.length > this.maxBatches || (this.bytes > this.maxBytes && this.held.length > 1)) {
      const old = this.held.shift()!;
      this.bytes -= old.batch.length;
      this.droppedSamples += old.samples;
      this.cursor--;
    }
  }

  /** Forgets every batch up to `seq` (the gateway holds them durably). */
  ackUpTo(seq: number): void {
    let n = 0;
    while (n < this.held.length && this.held[n]!.seq <= seq) {
      this.bytes -= this.held[n]!.batch.length;
      n++;
    }
    if (n === 0) return;
    this.held.splice(0, n);
    this.cursor = Math.max(0, this.cursor - n);
  }

  /** A new stream: every held batch is to be written again, oldest first. */
  rewind(): void {
    this.cursor = 0;
  }

  /** The next held batch to write again on this stream, or null when all are written. */
  nextResend(): Buffer | null {
    if (this.cursor >= this.held.length) return null;
    this.resentBatches++;
    return this.held[this.cursor++]!.batch;
  }
}
