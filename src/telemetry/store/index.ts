/**
 * The telemetry stores and what makes an insert durable: chdb, a ClickHouse server and a ClickHouse
 * cluster behind one SampleStore interface, their schema migrations, bound-parameter reads
 * (bound-query.ts), the insert queue that coalesces rows into large INSERTs, the disk spool and the
 * acknowledgement state it feeds (ack-tracker.ts), and store health for readiness.
 * Code outside this folder imports it through this file only (.dependency-cruiser.mjs).
 */
export { AckTracker, mergePoints } from './ack-tracker.js';
export type { DurablePoint, RobotAcks } from './ack-tracker.js';
export type { BoundQuery, Rows, BoundParam } from './bound-query.js';
export { openChdbStore } from './chdb-store.js';
export { openClickHouseClusterStore } from './clickhouse-cluster-store.js';
export { openClickHouseStore } from './clickhouse-store.js';
export type { ClickHouseSampleStore } from './clickhouse-store.js';
export { isDatabaseName, parseClickHouseUrl } from './clickhouse-target.js';
export { DEFAULT_INSERT_MAX_BYTES, InsertQueue } from './insert-queue.js';
export type { InsertQueueOptions } from './insert-queue.js';
export { hugePagesSetting } from './large-buffer.js';
export { setHugePages } from './large-buffer.js';
export { RowArena } from './row-arena.js';
export type { SampleStore, StoreKind } from './sample-store.js';
export { TelemetrySpool } from './spool.js';
export type { SpoolRecovery } from './spool.js';
export { StoreHealth } from './store-health.js';
