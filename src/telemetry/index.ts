/**
 * The telemetry pipe's public surface, for the gateway's wiring (src/gateway) and tools.
 * Path of a sample: robot link -> the robot's ingest sink (ingest.sinkFor; raw bytes) -> decode
 * pool -> rows (ClickHouse/chdb), snapshots (LMDB), live JSON (stream hub -> WebSocket). The WebSocket transport itself
 * (stream-ws.ts) is a layer above and is wired by src/gateway directly.
 */
export { createTelemetryIngest } from './ingest.js';
export type { TelemetryIngest, TelemetryIngestOptions, TelemetryIngestStats } from './ingest.js';
export type { InsertQueueOptions } from './insert-queue.js';
export type { SampleStore, StoreKind } from './sample-store.js';
export { openChdbStore } from './chdb-store.js';
export { openClickHouseStore } from './clickhouse-store.js';
export type { LiveSink } from './live-sink.js';
export { StreamHub, createStreamHub } from './stream-hub.js';
export type { StreamHubOptions } from './stream-hub.js';
export { STREAM_PATH, CLOSE as STREAM_CLOSE_CODES } from './stream-protocol.js';
export { TicketIssuer, MAX_TICKET_TTL_MS } from './ticket-issuer.js';
export type { TicketIssuerOptions, TicketScope } from './ticket-issuer.js';
export type { TelemetrySnapshot } from './snapshot.js';
