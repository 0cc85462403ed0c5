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
 *   users       userId                     -> UserRecord (src/auth/users)
 *   sessions    sessionId                  -> SessionRecord (src/auth/users)
 *   faults      faultId                    -> FaultRecord (src/fleet/safety/faults)
 *   deviceHealth robotId                   -> DeviceHealthRecord (src/fleet/robots/health)
 *   robotUsage  robotId                    -> RobotUsageRecord (src/fleet/robots/details)
 *   objects     objectId                   -> ObjectRecord (src/fleet/site/objects)
 *   alerts      alertId                    -> AlertRecord (src/fleet/safety/alerts)
 *   webhooks    "<orgId>/<webhookId>"      -> WebhookRecord (src/webhooks)
 *   webhookDeadLetters "<orgId>/<deadAtMs:12 hex>/<id>" -> DeadLetterRecord (src/webhooks)
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { open, type Database, type DatabaseOptions, type RootDatabase } from 'lmdb';
import { BackgroundWrites } from './background-writes.js';
import { RecordCache } from './record-cache.js';
import type { ApiKeyRecord, FleetRecord, OrgRecord, RobotRecord } from './records.js';
import { tolerantEncoder, type EncoderClass } from './tolerant-encoder.js';

/**
 * The value type of each named database. The store sits below every feature module and imports none
 * of them: the identity databases and the untyped ones are declared here, and each module that owns a
 * database adds it, next to its record type, by declaration merging
 * (`declare module '…/store/lmdb.js' { interface StoreDatabases { runs: RunRecord } }`): the events
 * log, idempotency, and the mission catalog, scheduling and runs.
 */
export interface StoreDatabases {
  orgs: OrgRecord;
  fleets: FleetRecord;
  robots: RobotRecord;
  apikeys: ApiKeyRecord;
  index: true;
  snapshots: unknown;
  commands: unknown;
  outbox: string;
  meta: unknown;
  audit: string;
}

/** The environment, one handle per named database, and the decode cache of the command path. */
export type Store = { readonly [K in keyof StoreDatabases]: Database<StoreDatabases[K], string> } & {
  readonly root: RootDatabase;
  /** Fleet and robot records decoded once per stored version (record-cache.ts). */
  readonly records: RecordCache;
  /** Where writes nobody awaits report their failure (background-writes.ts). */
  readonly writes: BackgroundWrites;
  close(): Promise<void>;
};

/**
 * Every named database, opened at start. Typed by StoreDatabases, so a database a module declares but
 * this list forgets is a compile error here rather than an undefined handle at run time.
 */
const DATABASES: { readonly [K in keyof StoreDatabases]: true } = {
  orgs: true,
  fleets: true,
  robots: true,
  apikeys: true,
  index: true,
  snapshots: true,
  commands: true,
  outbox: true,
  meta: true,
  audit: true,
  idempotency: true,
  events: true,
  features: true,
  templates: true,
  operations: true,
  schedules: true,
  fires: true,
  runs: true,
  users: true,
  sessions: true,
  faults: true,
  deviceHealth: true,
  robotUsage: true,
  fieldRules: true,
  objects: true,
  alerts: true,
  webhooks: true,
  webhookDeadLetters: true,
  floorPlans: true,
};

/** The named databases of the environment (backup verification counts each one). */
export const DATABASE_NAMES: readonly string[] = Object.keys(DATABASES);

/** Opens (creating if needed) the LMDB environment under `<dataDir>/lmdb`. */
export function openStore(dataDir: string): Store {
  const path = join(dataDir, 'lmdb');
  mkdirSync(path, { recursive: true });
  // maxDbs leaves room for later tables; mapSize grows automatically in lmdb-js.
  const root = open({ path, maxDbs: 64, compression: false });
  // Every named database encodes with lmdb-js's own msgpack class, made tolerant of values nested too
  // deeply for msgpack's recursion (records written before bodies were bounded: tolerant-encoder.ts).
  const Encoder = tolerantEncoder((root as unknown as { encoder: { constructor: EncoderClass } }).encoder.constructor);
  // `encoder: {Encoder}` is a documented lmdb-js option its typings leave out of DatabaseOptions.
  const options = (name: string): DatabaseOptions & { name: string } => ({ name, encoder: { Encoder } }) as DatabaseOptions & { name: string };
  const handles: Record<string, Database<unknown, string>> = {};
  for (const name of Object.keys(DATABASES)) handles[name] = root.openDB<unknown, string>(options(name));
  // Each handle's value type is the one its owner declared in StoreDatabases; lmdb-js does not check
  // values at run time either way (msgpack stores whatever it is given).
  const dbs = handles as unknown as { readonly [K in keyof StoreDatabases]: Database<StoreDatabases[K], string> };
  return {
    ...dbs,
    root,
    records: new RecordCache(dbs),
    writes: new BackgroundWrites(),
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
