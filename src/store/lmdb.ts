/**
 * Opens the gateway's LMDB environment. One environment per data dir, shared safely by the serving
 * process and `fleetgw admin` processes (LMDB is multi-process), so admin changes are seen by the
 * running server on its next read without any signalling.
 *
 * Key layout (docs/ARCHITECTURE.md has the full table):
 *   orgs        orgId                      -> OrgRecord
 *   fleets      fleetId                    -> FleetRecord
 *   robots      robotId                    -> RobotRecord
 *   apikeys     apiKeyId                   -> ApiKeyRecord
 *   index       "fleetsByOrg/<org>/<fleet>" | "robotsByFleet/<fleet>/<robot>" -> true
 *   snapshots   robotId                    -> TelemetrySnapshot (latest sample per robot)
 *   commands    commandId                  -> CommandRecord
 *   outbox      "<robotId>/<seq:16 hex>"   -> commandId (undelivered commands, in send order)
 *   meta        string                     -> any
 *   audit       "t|f|r/…/<createdAtMs:12 hex>/<commandId>" -> command audit index (src/commands/audit.ts)
 *   idempotency sha256(actor|org|fleet|endpoint|key) hex -> IdempotencyRecord (claim or completed reply)
 *   events      "<fleetId>/<correlationId>/<seq:16 hex>"  -> EventRecord
 *   features    featureId                  -> FeatureRecord
 *   templates   missionId                  -> TemplateRecord
 *   operations  fleetId                    -> OperationRecord (one per fleet)
 *   schedules   scheduleId                 -> ScheduleRecord
 *   fires       "<scheduleId>/<fireAtMs:16 hex>" -> FireRecord (one per due occurrence; the key makes a fire unique)
 *   runs        runId                      -> RunRecord
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { open, type Database, type DatabaseOptions, type RootDatabase } from 'lmdb';
import type { IdempotencyRecord } from '../idempotency/record.js';
import type { EventRecord, FeatureRecord, FireRecord, OperationRecord, RunRecord, ScheduleRecord, TemplateRecord } from '../missions/records.js';
import type { ApiKeyRecord, FleetRecord, OrgRecord, RobotRecord } from './records.js';
import { tolerantEncoder, type EncoderClass } from './tolerant-encoder.js';

export interface Store {
  readonly root: RootDatabase;
  readonly orgs: Database<OrgRecord, string>;
  readonly fleets: Database<FleetRecord, string>;
  readonly robots: Database<RobotRecord, string>;
  readonly apikeys: Database<ApiKeyRecord, string>;
  readonly index: Database<true, string>;
  readonly snapshots: Database<unknown, string>;
  readonly commands: Database<unknown, string>;
  readonly outbox: Database<string, string>;
  readonly meta: Database<unknown, string>;
  readonly audit: Database<string, string>;
  readonly idempotency: Database<IdempotencyRecord, string>;
  readonly events: Database<EventRecord, string>;
  readonly features: Database<FeatureRecord, string>;
  readonly templates: Database<TemplateRecord, string>;
  readonly operations: Database<OperationRecord, string>;
  readonly schedules: Database<ScheduleRecord, string>;
  readonly fires: Database<FireRecord, string>;
  readonly runs: Database<RunRecord, string>;
  close(): Promise<void>;
}

/** Opens (creating if needed) the LMDB environment under `<dataDir>/lmdb`. */
export function openStore(dataDir: string): Store {
  const path = join(dataDir, 'lmdb');
  mkdirSync(path, { recursive: true });
  // maxDbs leaves room for later tables; mapSize grows automatically in lmdb-js.
  const root = open({ path, maxDbs: 32, compression: false });
  // Every named database encodes with lmdb-js's own msgpack class, made tolerant of values nested too
  // deeply for msgpack's recursion (records written before bodies were bounded: tolerant-encoder.ts).
  const Encoder = tolerantEncoder((root as unknown as { encoder: { constructor: EncoderClass } }).encoder.constructor);
  // `encoder: {Encoder}` is a documented lmdb-js option its typings leave out of DatabaseOptions.
  const options = (name: string): DatabaseOptions & { name: string } => ({ name, encoder: { Encoder } }) as DatabaseOptions & { name: string };
  const db = <V>(name: string): Database<V, string> => root.openDB<V, string>(options(name));
  return {
    root,
    orgs: db<OrgRecord>('orgs'),
    fleets: db<FleetRecord>('fleets'),
    robots: db<RobotRecord>('robots'),
    apikeys: db<ApiKeyRecord>('apikeys'),
    index: db<true>('index'),
    snapshots: db<unknown>('snapshots'),
    commands: db<unknown>('commands'),
    outbox: db<string>('outbox'),
    meta: db<unknown>('meta'),
    audit: db<string>('audit'),
    idempotency: db<IdempotencyRecord>('idempotency'),
    events: db<EventRecord>('events'),
    features: db<FeatureRecord>('features'),
    templates: db<TemplateRecord>('templates'),
    operations: db<OperationRecord>('operations'),
    schedules: db<ScheduleRecord>('schedules'),
    fires: db<FireRecord>('fires'),
    runs: db<RunRecord>('runs'),
    close: async () => {
      // Writes nobody awaited (event log entries, run records written on the way out) are queued
      // for the end of the turn and committed on lmdb-js's writer: let them start and commit before
      // the environment closes under them.
      await new Promise((resolve) => setImmediate(resolve));
      await root.committed;
      await root.close();
    },
  };
}

/** Keys of an index range `<prefix>/<a>/` in insertion-independent (sorted) order. */
export function indexRange(store: Store, prefix: string): string[] {
  const start = `${prefix}/`;
  const out: string[] = [];
  for (const key of store.index.getKeys({ start, end: `${prefix}/\uffff` })) {
    out.push(key.slice(start.length));
  }
  return out;
}
