/**
 * The telemetry ingest (main thread): raw TelemetryBatch bytes from the robot link in; rows to the
 * store, snapshots to LMDB, live messages to the hubs out. Composes decode/, store/ and live/.
 * Code outside this folder imports it through this file only (.dependency-cruiser.mjs).
 */
export { BatchSeqReader } from './batch-seq.js';
export { createTelemetryIngest } from './ingest.js';
export type { TelemetryIngest, TelemetryIngestOptions, TelemetryIngestStats } from './contract.js';
