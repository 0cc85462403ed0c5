/**
 * Reads a TelemetryBatch's `seq` (field 2) and `epoch` (field 3) from the first bytes of its raw
 * encoding, without decoding the samples: batch-level work on the main thread (a few byte reads),
 * never per sample. Agents write both before the samples (proto/fleetgw/v1/telemetry.proto); a batch
 * whose bytes start with anything else is unsequenced and ingested as sent (older agents).
 *
 * Values above 2^53 are treated as unsequenced too: they cannot be exact JavaScript numbers, and no
 * agent needs them (a seq per batch at 1 kHz takes 285,000 years to get there).
 */

/** One reader per ingest: `seq` and `epoch` hold the last batch's values after {@link read}. */
export class BatchSeqReader {
  seq = 0;
  epoch = 0;

  /** True when `bytes` starts with a non-zero `seq` (and optionally `epoch`, in either order). */
  read(bytes: Uint8Array): boolean {
    this.seq = 0;
    this.epoch = 0;
    let pos = 0;
    // At most the two fields, each at most once (a repeat: the last wins, as protobuf-es reads).
    for (let field = 0; field < 4 && pos < bytes.length; field++) {
      const tag = bytes[pos]!;
      if (tag !== 0x10 && tag !== 0x18) break;
      let value = 0;
      let mul = 1;
      let i = pos + 1;
      for (;; i++) {
        if (i >= bytes.length || i - pos > 8) return this.none();
        const b = bytes[i]!;
        value += (b & 0x7f) * mul;
        if (b < 0x80) break;
        mul *= 128;
      }
      if (!Number.isSafeInteger(value)) return this.none();
      if (tag === 0x10) this.seq = value;
      else this.epoch = value;
      pos = i + 1;
    }
    return this.seq > 0;
  }

  private none(): boolean {
    this.seq = 0;
    this.epoch = 0;
    return false;
  }
}
