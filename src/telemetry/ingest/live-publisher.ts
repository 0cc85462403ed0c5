/**
 * Publishes a frame of a fleet with live subscribers the moment it arrives: decoded here on the main
 * thread (decode/live-decoder.ts), so the live stream never waits for the store's batching and a
 * worker round trip. The decode workers still write every row and snapshot; a failure here never
 * touches them.
 */
import type { Logger } from 'pino';
import { LiveDecoder } from '../decode/index.js';
import type { LiveSink } from '../live/index.js';
import type { IngestCounters } from './counters.js';

/** The ingest's live path: one decoder, created at the first frame someone watches. */
export class LivePublisher {
  private decoder: LiveDecoder | null = null;
  private lastErrorLogMs = 0;

  constructor(
    private readonly counters: IngestCounters,
    private readonly log: Logger,
    private readonly now: () => number,
  ) {}

  /** Decodes a watched frame here and publishes it; a failure here never touches the stored rows. */
  publish(live: LiveSink, robotId: string, fleetId: string, bytes: Uint8Array, receivedAtMs: number): void {
    try {
      const batch = (this.decoder ??= new LiveDecoder()).decode(robotId, fleetId, bytes, receivedAtMs);
      if (batch === null) return;
      this.counters.liveMessages += batch.index.length / 3;
      live.publish(batch);
    } catch (e) {
      // A bug (bad input is skipped by the decoder, not thrown): counted, logged at most once a second.
      this.counters.liveErrors++;
      const t = this.now();
      if (t - this.lastErrorLogMs >= 1_000) {
        this.lastErrorLogMs = t;
        this.log.error({ err: e, liveErrors: this.counters.liveErrors }, 'telemetry live publish failed');
      }
    }
  }
}
