/**
 * The telemetry pipe's public surface, for the gateway's wiring (src/gateway) and tools.
 * Path of a sample: robot link -> the robot's ingest sink (ingest/, ingest.sinkFor; raw bytes) ->
 * decode pool (decode/) -> rows (store/: ClickHouse/chdb), snapshots (LMDB), live JSON (live/: stream
 * hub -> WebSocket) and Foxglove frames (foxglove/). The sample's shape and encodings are in sample/.
 * Each sub-module is imported through its own index.ts; the WebSocket transports (live/stream-ws.ts,
 * foxglove/foxglove-ws.ts) are a layer above and are wired by src/gateway directly.
 */
export { createTelemetryIngest } from './ingest/index.js';
export type { TelemetryIngest, TelemetryIngestOptions, TelemetryIngestStats } from './ingest/index.js';
export { openChdbStore, openClickHouseStore } from './store/index.js';
export type { InsertQueueOptions, SampleStore, StoreKind } from './store/index.js';
export { StreamHub, createStreamHub, STREAM_PATH, CLOSE as STREAM_CLOSE_CODES, TicketIssuer, MAX_TICKET_TTL_MS } from './live/index.js';
export type { LiveSink, StreamHubOptions, TicketIssuerOptions, TicketScope } from './live/index.js';
export type { TelemetrySnapshot } from './sample/index.js';
