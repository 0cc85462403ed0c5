/**
 * gRPC's length-prefixed message framing, read from a stream's HTTP/2 DATA chunks: each message is a
 * 1-byte compressed flag, a 4-byte big-endian length and that many bytes, and chunk boundaries fall
 * anywhere. Used by the telemetry fast path (telemetry-frames.ts) in place of grpc-js's reader.
 *
 * Hand-written because it is the hottest code of the robot link and no library offers it apart from a
 * full gRPC stack: grpc-js's own reader hands each message through a read queue, an async
 * decompression step, an object-mode stream and a pause/resume of the HTTP/2 stream, which measured
 * over twice the CPU of node:http2 alone at 1,000 robots x 10 Hz (bench/notes/telemetry-ingest.md,
 * "Telemetry fast path").
 *
 * A message that fits in one chunk is handed over as a view of it. One split across chunks is
 * assembled: up to {@link REUSED_ASSEMBLY_BYTES} into one buffer per reader, reused for every such
 * message and kept while the stream lives (grown as needed, never past that bound, so a header alone
 * pins at most 64 KiB); a larger one from copies of the pieces received, so what it holds is what its
 * robot actually sent, never what a header merely declares: five bytes must not pin 4 MiB.
 *
 * So a message is valid only during `onMessage`: the receiver copies what it keeps (the ingest copies
 * each batch into its frame packer at once). Why the reuse: after a paused robot resumes, its HTTP/2
 * DATA frames no longer line up with its messages, and most batches at 1,000 Hz were split; two
 * fresh copies of each (the pieces, then the message) at peak were enough short-lived ArrayBuffers on
 * the main thread, which V8 counts as external memory toward its next full GC, to start several full
 * GCs a second while robots were paused and resumed (bench/notes/telemetry-ingest.md, "Target 1 on an
 * AMD machine").
 */

/**
 * Largest message assembled in the reader's reused buffer (a stream holds at most this much for it,
 * its default HTTP/2 stream window); larger split messages are assembled from copies, as before.
 */
export const REUSED_ASSEMBLY_BYTES = 64 * 1024;

/** Why the reader stopped: the caller ends the call with the matching gRPC status. */
export interface GrpcFramingError {
  code: 'RESOURCE_EXHAUSTED' | 'INTERNAL';
  details: string;
}

const HEADER_BYTES = 5;

export class GrpcMessageReader {
  /** Header bytes seen of the message being read (0-5). */
  private headerLen = 0;
  private readonly header = new Uint8Array(HEADER_BYTES);
  /** Pieces (copies) of a message over REUSED_ASSEMBLY_BYTES being assembled across chunks, their total, and its length (-1: none). */
  private pieces: Uint8Array[] = [];
  /**
   * The reused assembly buffer for split messages of at most REUSED_ASSEMBLY_BYTES (grown to the
   * largest so far); null until one is split.
   */
  private assembly: Uint8Array | null = null;
  private filled = 0;
  private expected = -1;
  private failed: GrpcFramingError | null = null;

  /**
   * @param maxMessageBytes larger messages end the stream (RESOURCE_EXHAUSTED), as grpc-js does.
   * @param onMessage receives each message's bytes, in order.
   */
  constructor(
    private readonly maxMessageBytes: number,
    private readonly onMessage: (message: Uint8Array) => void,
  ) {}

  /**
   * Reads one DATA chunk. Returns the framing error that stops the stream (then and on every later
   * call), or null. Messages before the error in the same chunk have been delivered.
   */
  push(chunk: Uint8Array): GrpcFramingError | null {
    if (this.failed !== null) return this.failed;
    let pos = 0;
    const end = chunk.length;
    while (pos < end) {
      if (this.expected !== -1) {
        const take = Math.min(this.expected - this.filled, end - pos);
        if (this.expected <= REUSED_ASSEMBLY_BYTES) this.assembly!.set(new Uint8Array(chunk.buffer, chunk.byteOffset + pos, take), this.filled);
        else this.pieces.push(chunk.slice(pos, pos + take));
        this.filled += take;
        pos += take;
        if (this.filled === this.expected) {
          this.onMessage(this.assemble());
          // The receiver may have closed the reader (its stream ended): read nothing more.
          if (this.failed !== null) return this.failed;
        }
        continue;
      }
      // The common case: a whole header in this chunk, read in place.
      let length: number;
      let flag: number;
      if (this.headerLen === 0 && end - pos >= HEADER_BYTES) {
        flag = chunk[pos]!;
        length = ((chunk[pos + 1]! << 24) >>> 0) + (chunk[pos + 2]! << 16) + (chunk[pos + 3]! << 8) + chunk[pos + 4]!;
        pos += HEADER_BYTES;
      } else {
        const take = Math.min(HEADER_BYTES - this.headerLen, end - pos);
        this.header.set(chunk.subarray(pos, pos + take), this.headerLen);
        this.headerLen += take;
        pos += take;
        if (this.headerLen < HEADER_BYTES) break;
        this.headerLen = 0;
        const h = this.header;
        flag = h[0]!;
        length = ((h[1]! << 24) >>> 0) + (h[2]! << 16) + (h[3]! << 8) + h[4]!;
      }
      if (flag !== 0) {
        // Only identity-encoded streams come here (a compressed stream stays on grpc-js's reader).
        this.failed = { code: 'INTERNAL', details: 'a compressed message on a stream without a grpc-encoding' };
        return this.failed;
      }
      if (length > this.maxMessageBytes) {
        this.failed = { code: 'RESOURCE_EXHAUSTED', details: `Received message larger than max (${length} vs. ${this.maxMessageBytes})` };
        return this.failed;
      }
      if (end - pos >= length) {
        // A plain view: Buffer's subarray goes through the species constructor, measurably slower per message.
        const message = new Uint8Array(chunk.buffer, chunk.byteOffset + pos, length);
        pos += length;
        this.onMessage(message);
        if (this.failed !== null) return this.failed;
      } else {
        this.expected = length;
        this.filled = 0;
        if (length <= REUSED_ASSEMBLY_BYTES && (this.assembly === null || this.assembly.length < length)) {
          // Grown to what this robot sends, doubling (at most REUSED_ASSEMBLY_BYTES), not allocated per message.
          const had = this.assembly?.length ?? 0;
          this.assembly = new Uint8Array(Math.min(REUSED_ASSEMBLY_BYTES, Math.max(length, 4096, had * 2)));
        }
      }
    }
    return null;
  }

  /** True between messages: a stream that ends now ended cleanly. */
  get atBoundary(): boolean {
    return this.headerLen === 0 && this.expected === -1;
  }

  /** Drops a partly received message; later chunks are refused (the stream has ended on our side). */
  close(): void {
    this.pieces = [];
    this.assembly = null;
    this.expected = -1;
    this.failed ??= { code: 'INTERNAL', details: 'the stream was closed' };
  }

  private assemble(): Uint8Array {
    const n = this.expected;
    this.expected = -1;
    if (n <= REUSED_ASSEMBLY_BYTES) return new Uint8Array(this.assembly!.buffer, 0, n);
    const pieces = this.pieces;
    this.pieces = [];
    if (pieces.length === 1) return pieces[0]!;
    const out = new Uint8Array(this.filled);
    let at = 0;
    for (const p of pieces) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }
}
