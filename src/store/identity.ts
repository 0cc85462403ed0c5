/**
 * Organizations, fleets and robots in LMDB (API keys are the auth module's: src/auth/key-admin.ts). Used by `fleetgw admin` (another process) and by
 * the server's request path; writes are synchronous transactions so an admin command is durable before
 * it prints its result.
 */
import { randomUUID } from 'node:crypto';
import { indexRange, keyPrefix, lastSegment } from './keys.js';
import { keysetOver, type Keyset } from './keyset.js';
import type { Store } from './lmdb.js';
import type { FleetRecord, OrgRecord, RobotRecord } from './records.js';
import { putRobotNameKey, removeRobotNameKey } from './robot-names.js';
import { mintRobotToken } from './secrets.js';
import { putVda5050Key, removeVda5050Key, robotOfVda5050, touchVda5050Bindings, type StoredVda5050Binding } from './vda5050-index.js';

/*
 * Index keys of the identity records (in `index`; this module alone builds them):
 *   fleetsByOrg/<orgId>/<fleetId>
 *   robotsByFleet/<fleetId>/<robotId>   every robot of the fleet, active or not
 *   robotsByName/…                      robot-names.ts (written here with the robot)
 *   robotsByVda5050/…                   vda5050-index.ts (written here with the robot)
 */
const FLEETS_BY_ORG = 'fleetsByOrg';
const ROBOTS_BY_FLEET = 'robotsByFleet';

/** Creates an organization. */
export function createOrg(store: Store, name: string, now = Date.now()): OrgRecord {
  const org: OrgRecord = { orgId: randomUUID(), name, createdAtMs: now };
  store.orgs.putSync(org.orgId, org);
  return org;
}

/** Creates a fleet in an existing organization; throws when the organization does not exist. */
export function createFleet(store: Store, orgId: string, name: string, now = Date.now()): FleetRecord {
  if (!store.orgs.get(orgId)) throw new Error(`organization ${orgId} does not exist`);
  const fleet: FleetRecord = { fleetId: randomUUID(), orgId, name, createdAtMs: now };
  store.root.transactionSync(() => {
    store.fleets.putSync(fleet.fleetId, fleet);
    store.index.putSync(`${FLEETS_BY_ORG}/${orgId}/${fleet.fleetId}`, true);
  });
  return fleet;
}

export interface NewRobotOptions {
  fleetId: string;
  name: string;
  capabilities: string[];
  active: boolean;
  /** The robot's VDA 5050 identity, already checked topic-safe (src/fleet/robots/vda5050-identity.ts). */
  vda5050?: StoredVda5050Binding;
}

/** A VDA 5050 identity is bound to one robot only: this one holds it. */
export class Vda5050IdentityTaken extends Error {
  constructor(
    readonly holderRobotId: string,
    readonly binding: StoredVda5050Binding,
  ) {
    super(`VDA 5050 identity ${binding.manufacturer}/${binding.serialNumber} is already bound to robot ${holderRobotId}`);
    this.name = 'Vda5050IdentityTaken';
  }
}

/** Inside a transaction: the robot other than `robotId` that holds `binding`, if any. */
export function vda5050HolderOther(store: Store, robotId: string, binding: StoredVda5050Binding): string | undefined {
  const holder = robotOfVda5050(store, binding.manufacturer, binding.serialNumber);
  return holder !== undefined && holder.robotId !== robotId ? holder.robotId : undefined;
}

/**
 * Registers a robot in a fleet; the raw token is returned once and never stored.
 * @throws Vda5050IdentityTaken when `opts.vda5050` is bound to another robot (nothing is written)
 */
export function addRobot(store: Store, opts: NewRobotOptions, now = Date.now()): { record: RobotRecord; robotToken: string } {
  const fleet = store.fleets.get(opts.fleetId);
  if (!fleet) throw new Error(`fleet ${opts.fleetId} does not exist`);
  const { token, tokenHash } = mintRobotToken();
  const record: RobotRecord = {
    robotId: randomUUID(),
    fleetId: fleet.fleetId,
    orgId: fleet.orgId,
    name: opts.name,
    capabilities: [...new Set(opts.capabilities)],
    active: opts.active,
    tokenHash,
    createdAtMs: now,
    ...(opts.vda5050 !== undefined ? { vda5050: { manufacturer: opts.vda5050.manufacturer, serialNumber: opts.vda5050.serialNumber } } : {}),
  };
  store.root.transactionSync(() => {
    if (record.vda5050 !== undefined) {
      // Checked inside the write so two registrations of one identity cannot both succeed.
      const holder = vda5050HolderOther(store, record.robotId, record.vda5050);
      if (holder !== undefined) throw new Vda5050IdentityTaken(holder, record.vda5050);
    }
    store.robots.putSync(record.robotId, record);
    store.index.putSync(`${ROBOTS_BY_FLEET}/${fleet.fleetId}/${record.robotId}`, true);
    putRobotNameKey(store, record);
    putVda5050Key(store, record);
  });
  return { record, robotToken: token };
}

/**
 * Inside a write transaction: stores a changed robot record `next` (metadata, fleet of record, VDA
 * 5050 identity) in place of `cur`, refiling its name key when its name or fleet changed and its
 * identity key when its identity changed. Its `robotsByFleet` key moves with {@link moveRobotIndexSync}.
 * @throws Vda5050IdentityTaken when `next`'s identity is bound to another robot (the caller checks
 *   first with {@link vda5050HolderOther} to answer without a throw; this is the last guard)
 */
export function replaceRobotSync(store: Store, cur: RobotRecord, next: RobotRecord): void {
  const identityChanged = next.vda5050?.manufacturer !== cur.vda5050?.manufacturer || next.vda5050?.serialNumber !== cur.vda5050?.serialNumber;
  if (identityChanged && next.vda5050 !== undefined) {
    const holder = vda5050HolderOther(store, next.robotId, next.vda5050);
    if (holder !== undefined) throw new Vda5050IdentityTaken(holder, next.vda5050);
  }
  store.robots.putSync(next.robotId, next);
  if (next.name !== cur.name || next.fleetId !== cur.fleetId) {
    // The name index (resolve, robot-names.ts) files robots by fleet and name.
    removeRobotNameKey(store, cur);
    putRobotNameKey(store, next);
  }
  if (identityChanged) {
    removeVda5050Key(store, cur);
    putVda5050Key(store, next);
  } else if (next.vda5050 !== undefined && next.fleetId !== cur.fleetId) {
    // What the identity resolves to (its fleet) changed: the running gateway re-reads it.
    touchVda5050Bindings(store);
  }
}

/** Inside a write transaction: files a robot under another fleet (the caller writes its record). */
export function moveRobotIndexSync(store: Store, robotId: string, fromFleetId: string, toFleetId: string): void {
  store.index.removeSync(`${ROBOTS_BY_FLEET}/${fromFleetId}/${robotId}`);
  store.index.putSync(`${ROBOTS_BY_FLEET}/${toFleetId}/${robotId}`, true);
}

/** Fleets of an organization, ordered by id. */
export function listFleets(store: Store, orgId: string): FleetRecord[] {
  const out: FleetRecord[] = [];
  for (const id of indexRange(store, `${FLEETS_BY_ORG}/${orgId}`)) {
    const f = store.fleets.get(id);
    if (f) out.push(f);
  }
  return out;
}

/** The fleets of an organization as a keyset, ordered by fleetId (the list reader pages it). */
export function fleetsOf(store: Store, orgId: string): Keyset<FleetRecord> {
  return keysetOver(store.index, { prefix: `${FLEETS_BY_ORG}/${orgId}/` }, (key) => store.fleets.get(key.slice(key.lastIndexOf('/') + 1)));
}

/** Robots of a fleet (active or not), ordered by id. */
export function listRobots(store: Store, fleetId: string): RobotRecord[] {
  const out: RobotRecord[] = [];
  for (const id of fleetRobotIds(store, fleetId)) {
    const r = store.robots.get(id);
    if (r) out.push(r);
  }
  return out;
}

/** Ids of a fleet's robots (active or not), ordered by id; a key read, nothing decoded. */
export function fleetRobotIds(store: Store, fleetId: string): string[] {
  return indexRange(store, `${ROBOTS_BY_FLEET}/${fleetId}`);
}

/**
 * A fleet's robots (active or not), ordered by id, as a keyset; `where` skips records it refuses
 * (a list's filters), so a page still holds `limit` matching robots. Records come through the
 * decode cache (`store.records`).
 */
export function robotsOf(store: Store, fleetId: string, where?: (r: Readonly<RobotRecord>) => boolean): Keyset<Readonly<RobotRecord>> {
  return keysetOver(store.index, { prefix: keyPrefix(ROBOTS_BY_FLEET, fleetId) }, (key) => {
    const r = store.records.robot(lastSegment(key));
    return r && r.fleetId === fleetId && (where === undefined || where(r)) ? r : undefined;
  });
}
