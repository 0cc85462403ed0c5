/**
 * The ingest's row store: chdb unless a ClickHouse server (or cluster) is named, and the log lines of
 * its set-up (schema migrations, insert format, a server that answered only after the start).
 */
import type { Logger } from 'pino';
import { openChdbStore, openClickHouseClusterStore, openClickHouseStore, type ClickHouseSampleStore, type SampleStore } from '../store/index.js';
import type { TelemetryIngestOptions } from './contract.js';

/** Opens chdb under `dataDir`, or the ClickHouse server or cluster `clickhouseUrl` names. */
export async function openSampleStore(opts: TelemetryIngestOptions): Promise<SampleStore> {
  const serverOpts = opts.clickhouseUrl === undefined ? null : {
    url: opts.clickhouseUrl,
    ...(opts.clickhouseDatabase !== undefined ? { database: opts.clickhouseDatabase } : {}),
    ...(opts.clickhouseAuth?.username !== undefined ? { username: opts.clickhouseAuth.username } : {}),
    ...(opts.clickhouseAuth?.password !== undefined ? { password: opts.clickhouseAuth.password } : {}),
    ...(opts.retentionDays !== undefined ? { retentionDays: opts.retentionDays } : {}),
  };
  return serverOpts !== null
    ? opts.clickhouseCluster !== undefined
      ? await openClickHouseClusterStore({
        ...serverOpts,
        cluster: opts.clickhouseCluster.name,
        shardUrls: opts.clickhouseCluster.shardUrls,
        warn: (message) => opts.log?.warn({ store: 'clickhouse' }, message),
      })
      : await openClickHouseStore({ ...serverOpts, ...(opts.clickhouseInsertFormat !== undefined ? { insertFormat: opts.clickhouseInsertFormat } : {}), warn: (message) => opts.log?.warn({ store: 'clickhouse' }, message) })
    : await openChdbStore({ dataDir: opts.dataDir, ...(opts.retentionDays !== undefined ? { retentionDays: opts.retentionDays } : {}) });
}

/** Logs the store's set-up now, or once it is done when its server did not answer at start. */
export function reportStoreSetUp(log: Logger | undefined, sampleStore: SampleStore): void {
  if (log !== undefined && sampleStore.setUpError === null) logSchema(log, sampleStore);
  else if (log !== undefined) {
    // The server did not answer at start (the gateway reports it down): said once it is set up.
    void sampleStore.setUpDone().then(() => {
      log.info({ store: sampleStore.kind, version: sampleStore.version, schemaVersion: sampleStore.schema?.to }, 'telemetry store set up: its server answered after the gateway started');
      logSchema(log, sampleStore);
    });
  }
}

/** One line when the start-up migrations changed the store, a warning when it is ahead of this gateway. */
function logSchema(log: Logger, store: SampleStore): void {
  if ('insertFormat' in store) {
    const f = (store as ClickHouseSampleStore).insertFormat;
    if (f !== null) log.info({ store: store.kind, insertFormat: f.format, reason: f.reason }, 'telemetry inserts encoded');
  }
  const s = store.schema;
  if (s === null) return;
  if (s.newerThanKnown) {
    log.warn({ store: store.kind, schemaVersion: s.from }, 'telemetry schema is newer than this gateway knows: upgrade the gateway (migrations are additive, so inserts keep working)');
  } else if (s.applied.length > 0) {
    log.info({ store: store.kind, from: s.from, to: s.to, applied: s.applied }, 'telemetry schema migrated');
  }
}
