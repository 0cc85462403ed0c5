/**
 * What the ingest needs from the live stream (stream-hub.ts implements it): which fleets are being
 * watched, so the worker produces JSON only for those, and where to hand the produced messages.
 */
import type { FoxgloveBatch, LiveBatch } from '../decode/index.js';

export interface LiveSink {
  /** True when at least one socket is subscribed to the fleet right now. */
  hasSubscribers(fleetId: string): boolean;
  /** True when any fleet has a subscriber (lets the ingest skip the per-robot check). */
  anySubscribers(): boolean;
  /** Delivers one worker result's messages, in sample order. */
  publish(batch: LiveBatch): void;
}

/** What the ingest needs from the Foxglove endpoint (foxglove-hub.ts implements it). */
export interface FoxgloveSink {
  /** True when any Foxglove socket subscribes to any channel (lets the ingest skip the per-robot check). */
  anyWatched(): boolean;
  /** The channel kinds (bits of FOXGLOVE_KINDS) some socket subscribes to for this robot; 0: none. */
  watchedKinds(robotId: string): number;
  /** Delivers one worker result's Foxglove frames, in sample order. */
  publishFoxglove(batch: FoxgloveBatch): void;
}
