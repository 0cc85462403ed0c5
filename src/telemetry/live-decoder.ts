/**
 * Decodes one robot frame on the main thread the moment it arrives, for fleets that have live
 * subscribers: the live stream no longer waits for the store's batching and a worker round trip
 * (that cost ~25 ms). The decode workers still write every row and snapshot; this is a second,
 * small decode of a frame someone is watching (about a microsecond per sample with the addon).
 *
 * It runs the same decoder as the workers (decode/select.ts: the addon, or the JS reader with
 * FLEETGW_TELEMETRY_DECODER=js) on a one-frame task, so the live JSON and rows are byte-identical to
 * theirs. A frame that does not decode is skipped here: the worker counts and reports it.
 */
import { chooseDecoder, type TaskDecoder } from './decode/select.js';
import { rowSpans } from './row-span.js';
import { FRAME_HEADER_BYTES, type LiveBatch } from './worker-protocol.js';

const LIVE_ONE = Uint8Array.of(1);

export class LiveDecoder {
  private scratch = new ArrayBuffer(16 * 1024);

  constructor(private readonly decoder: TaskDecoder = chooseDecoder()) {}

  /** The frame's samples as live messages (JSON and RowBinary row each), or null when it has none. */
  decode(robotId: string, fleetId: string, bytes: Uint8Array, receivedAtMs: number): LiveBatch | null {
    const need = FRAME_HEADER_BYTES + bytes.length;
    // The scratch buffer is reused: the decoder reads it synchronously and returns fresh outputs.
    if (need > this.scratch.byteLength) this.scratch = new ArrayBuffer(Math.max(need, this.scratch.byteLength * 2));
    const view = new DataView(this.scratch);
    view.setUint32(0, 0, true);
    view.setUint32(4, bytes.length, true);
    view.setFloat64(8, receivedAtMs, true);
    new Uint8Array(this.scratch, FRAME_HEADER_BYTES, bytes.length).set(bytes);
    const r = this.decoder.decode(
      { frames: this.scratch, byteLength: need, frameCount: 1, robotIds: [robotId], fleetIds: [fleetId], live: LIVE_ONE },
      0,
    );
    if (r.live === null || r.rowCount === 0) return null;
    const { spans, ts } = rowSpans(r.rows, r.rowCount);
    // One row and one live message per valid sample, in the same order (every decoder writes both).
    if (spans.length / 2 !== r.live.index.length / 3) return { ...r.live };
    return { ...r.live, rows: r.rows, rowSpans: spans, ts };
  }
}
