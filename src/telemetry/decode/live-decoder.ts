/**
 * Decodes one robot frame on the main thread the moment it arrives, for fleets that have live
 * subscribers: the live stream does not wait for the store's batching and a worker round trip
 * (bench/notes/live-fanout.md). The decode workers still write every row and snapshot; this is a second,
 * small decode of a frame someone is watching.
 *
 * It runs the hand-rolled JS reader (decode/fast-reader.ts) whatever the workers run: its output is
 * byte-identical to the addon's (test/telemetry/decoders.test.ts), and for a single frame the addon's
 * call costs far more than the decode (it allocates its result buffers and object, an order of
 * magnitude more than the decode here; bench/notes/live-fanout.md). Its writers and per-robot state are reused from frame to frame, so a frame
 * allocates only the small index arrays of its result. A frame that does not decode is skipped here:
 * the worker counts and reports it.
 */
import { decodeFrameFast } from './fast-reader.js';
import { TaskOutput } from './task-output.js';
import type { LiveBatch } from './worker-protocol.js';

const LIVE_ONE = Uint8Array.of(1);
/** Robots whose per-robot output is kept; past it the cache starts over (ids of gone robots). */
const MAX_ROBOTS = 100_000;

/** A one-robot task output kept for that robot's frames, also noting each row's span and clock. */
class LiveOutput extends TaskOutput {
  readonly spans: number[] = [];
  readonly ts: number[] = [];

  override rowDone(robotIndex: number, start: number, hi: number, lo: number): void {
    super.rowDone(robotIndex, start, hi, lo);
    this.spans.push(start, this.rows.pos);
    // Correctly rounded like Number(bigint), as TaskOutput.finish() does.
    this.ts.push(hi * 4294967296 + lo);
  }

  reset(): void {
    this.rows.pos = 0;
    this.live!.pos = 0;
    this.liveIndex.length = 0;
    this.rowCount = 0;
    this.spans.length = 0;
    this.ts.length = 0;
  }
}

export class LiveDecoder {
  private readonly outputs = new Map<string, LiveOutput>();

  /**
   * The frame's samples as live messages (JSON and RowBinary row each), or null when it has none or
   * does not decode. `data` and `rows` are views into reused buffers: valid until the next call.
   */
  decode(robotId: string, fleetId: string, bytes: Uint8Array, receivedAtMs: number): LiveBatch | null {
    const out = this.outputFor(robotId, fleetId);
    out.reset();
    try {
      decodeFrameFast(out, bytes, new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), 0, bytes.length, 0, receivedAtMs);
    } catch {
      return null;
    }
    if (out.liveIndex.length === 0) return null;
    const task = out.task;
    return {
      data: out.live!.written(),
      index: Uint32Array.from(out.liveIndex),
      robotIds: task.robotIds,
      fleetIds: task.fleetIds,
      rows: out.rows.written(),
      rowSpans: Uint32Array.from(out.spans),
      ts: Float64Array.from(out.ts),
    };
  }

  private outputFor(robotId: string, fleetId: string): LiveOutput {
    let out = this.outputs.get(robotId);
    // A robot moved to another fleet gets a fresh output (its ids are baked into the output).
    if (out === undefined || out.task.fleetIds[0] !== fleetId) {
      if (this.outputs.size >= MAX_ROBOTS) this.outputs.clear();
      out = new LiveOutput({ frames: new ArrayBuffer(0), slot: -1, byteLength: 0, frameCount: 1, robotIds: [robotId], fleetIds: [fleetId], live: LIVE_ONE });
      this.outputs.set(robotId, out);
    }
    return out;
  }
}
