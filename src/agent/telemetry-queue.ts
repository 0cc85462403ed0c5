/**
 * The agent's bounded outbound telemetry queue: encoded samples wait here while the telemetry stream
 * is disconnected or not writable (HTTP/2 flow control from a busy gateway).
 *
 * Policy when full: the oldest samples are dropped and counted. For live telemetry the newest state
 * matters most, and a robot must never grow memory without bound while its link is down.
 */
import { varintSize, writeVarint } from '../protocol/varint.js';

export class TelemetryQueue {
  private readonly ring: (Uint8Array | undefined)[];
  private head = 0;
  private size = 0;
  /** Samples dropped because the queue was full. */
  dropped = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new Error('telemetry queue capacity must be a positive integer');
    this.ring = new Array<Uint8Array | undefined>(capacity);
  }

  get length(): number {
    return this.size;
  }

  /** Appends one encoded TelemetrySample, dropping the oldest when full. */
  push(sample: Uint8Array): void {
    if (this.size === this.capacity) {
      this.ring[this.head] = undefined;
      this.head = (this.head + 1) % this.capacity;
      this.size--;
      this.dropped++;
    }
    this.ring[(this.head + this.size) % this.capacity] = sample;
    this.size++;
  }

  /**
   * Removes up to `max` of the oldest samples and returns them as one encoded TelemetryBatch
   * (what PublishTelemetry carries), ready to write; null when empty. With `seq` > 0 the batch
   * starts with its `seq` (field 2) and `epoch` (field 3): the gateway reads them in any order, and
   * ahead of the samples it has the fewest bytes to step over.
   */
  takeBatch(max: number, seq = 0, epoch = 0): { batch: Buffer; samples: number } | null {
    const n = Math.min(max, this.size);
    if (n === 0) return null;
    let batchLen = seq > 0 ? 2 + varintSize(seq) + varintSize(epoch) : 0;
    for (let i = 0; i < n; i++) {
      const s = this.ring[(this.head + i) % this.capacity]!;
      batchLen += 1 + varintSize(s.length) + s.length;
    }
    // One allocation, filled with the `samples` field (1, length-delimited) of each sample in turn.
    const batch = Buffer.allocUnsafe(batchLen);
    let pos = 0;
    if (seq > 0) {
      batch[pos++] = 0x10; // TelemetryBatch.seq, varint
      pos = writeVarint(batch, pos, seq);
      batch[pos++] = 0x18; // TelemetryBatch.epoch, varint
      pos = writeVarint(batch, pos, epoch);
    }
    for (let i = 0; i < n; i++) {
      const idx = (this.head + i) % this.capacity;
      const s = this.ring[idx]!;
      this.ring[idx] = undefined;
      batch[pos++] = 0x0a; // TelemetryBatch.samples, length-delimited
      pos = writeVarint(batch, pos, s.length);
      batch.set(s, pos);
      pos += s.length;
    }
    this.head = (this.head + n) % this.capacity;
    this.size -= n;
    return { batch, samples: n };
  }

  clear(): void {
    this.ring.fill(undefined);
    this.head = 0;
    this.size = 0;
  }
}
