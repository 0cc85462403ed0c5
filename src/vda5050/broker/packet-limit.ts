/**
 * Bounds the size of each MQTT packet a client sends, before the broker buffers it: aedes' parser
 * (mqtt-packet) accepts the protocol's 256 MiB and keeps a packet's bytes until it is complete, so one
 * client could hold that much memory. This reads each packet's fixed header (a type byte and the
 * 1-4 byte "remaining length") as bytes stream through, and ends the connection when a packet
 * declares more than the limit, before its body arrives.
 */
import { Duplex } from 'node:stream';
import type { Socket } from 'node:net';

/** Follows MQTT packet boundaries in a byte stream; `feed` is false once a packet is over the limit. */
export class PacketSizeScanner {
  /** 0: at a packet's type byte; 1: in its remaining length; 2: in its body. */
  private phase = 0;
  private length = 0;
  private multiplier = 1;
  private lengthBytes = 0;
  private bodyLeft = 0;

  constructor(private readonly maxBytes: number) {}

  /** The size the last refused packet declared (for the log line). */
  refusedLength = 0;

  feed(chunk: Buffer): boolean {
    let i = 0;
    while (i < chunk.length) {
      if (this.phase === 2) {
        const take = Math.min(this.bodyLeft, chunk.length - i);
        this.bodyLeft -= take;
        i += take;
        if (this.bodyLeft === 0) this.phase = 0;
        continue;
      }
      const byte = chunk[i++]!;
      if (this.phase === 0) {
        this.phase = 1;
        this.length = 0;
        this.multiplier = 1;
        this.lengthBytes = 0;
        continue;
      }
      this.length += (byte & 0x7f) * this.multiplier;
      this.multiplier *= 128;
      this.lengthBytes++;
      if ((byte & 0x80) !== 0) {
        // A fifth length byte is malformed; mqtt-packet refuses it too, this only stops counting.
        if (this.lengthBytes === 4) return this.refuse(this.length);
        continue;
      }
      if (this.length > this.maxBytes) return this.refuse(this.length);
      this.bodyLeft = this.length;
      this.phase = this.length === 0 ? 0 : 2;
    }
    return true;
  }

  private refuse(length: number): false {
    this.refusedLength = length;
    return false;
  }
}

/**
 * The socket as aedes reads it: bytes pass through a {@link PacketSizeScanner}; the first packet over
 * `maxBytes` destroys the socket and calls `onRefused`. Writes go straight to the socket; reads keep
 * its flow control (the socket pauses while this stream's buffer is full).
 */
export class PacketLimitedStream extends Duplex {
  private readonly scanner: PacketSizeScanner;

  constructor(
    private readonly socket: Socket,
    maxBytes: number,
    onRefused: (declaredBytes: number) => void,
  ) {
    super({ allowHalfOpen: false });
    this.scanner = new PacketSizeScanner(maxBytes);
    socket.on('data', (chunk: Buffer) => {
      if (!this.scanner.feed(chunk)) {
        onRefused(this.scanner.refusedLength);
        socket.destroy();
        this.destroy();
        return;
      }
      if (!this.push(chunk)) socket.pause();
    });
    socket.on('end', () => this.push(null));
    socket.on('error', (err) => this.destroy(err));
    socket.on('close', () => this.destroy());
  }

  override _read(): void {
    this.socket.resume();
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    this.socket.write(chunk, done);
  }

  /**
   * Everything written in one turn (mqtt-packet corks the stream and writes a packet as up to five
   * pieces) goes to the socket as one write: piece by piece, with TCP_NODELAY on, each would be its
   * own segment and the next one would wait for the previous write's callback.
   */
  override _writev(chunks: Array<{ chunk: Buffer }>, done: (err?: Error | null) => void): void {
    this.socket.write(chunks.length === 1 ? chunks[0]!.chunk : Buffer.concat(chunks.map((c) => c.chunk)), done);
  }

  override _final(done: (err?: Error | null) => void): void {
    this.socket.end(done);
  }

  override _destroy(err: Error | null, done: (err?: Error | null) => void): void {
    this.socket.destroy();
    done(err);
  }
}
