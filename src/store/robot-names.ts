/**
 * The robots of a fleet by case-folded name, so `resolve` finds names without reading every robot
 * of the fleet (index key `robotsByName/<fleetId>/<folded name>/<robotId>` in `index`, written with
 * the robot by identity.ts). A name is folded with `toLowerCase` and cut to {@link MAX_NAME_KEY}
 * characters in the key; every hit is checked against the robot record, so a name containing `/`,
 * a cut name or a key left behind by a record changed elsewhere never yields a wrong robot.
 *
 * Whoever renames a robot or moves it to another fleet must move its key (removeRobotNameKey, then
 * putRobotNameKey); no code does either today. Stores written before this index existed are
 * back-filled once at gateway start ({@link ensureRobotNameIndex}).
 */
import { keyPrefix, lastSegment, prefixRange } from './keys.js';
import type { Store } from './lmdb.js';
import type { RobotRecord } from './records.js';

const ROBOTS_BY_NAME = 'robotsByName';
const ROBOTS_BY_FLEET = 'robotsByFleet';
/** The meta key recording that every robot has its name key. */
const BACKFILLED = 'robotNameIndex';
/** Longest folded name kept in a key (LMDB keys are bounded). */
export const MAX_NAME_KEY = 200;

const folded = (name: string): string => name.toLowerCase().slice(0, MAX_NAME_KEY);
const keyOf = (r: Pick<RobotRecord, 'fleetId' | 'name' | 'robotId'>): string => `${keyPrefix(ROBOTS_BY_NAME, r.fleetId, folded(r.name))}${r.robotId}`;

/** Inside a write transaction: files the robot under its name. */
export function putRobotNameKey(store: Store, r: Pick<RobotRecord, 'fleetId' | 'name' | 'robotId'>): void {
  store.index.putSync(keyOf(r), true);
}

/** Inside a write transaction: removes the robot's name key (before a rename or a fleet move). */
export function removeRobotNameKey(store: Store, r: Pick<RobotRecord, 'fleetId' | 'name' | 'robotId'>): void {
  store.index.removeSync(keyOf(r));
}

/** The fleet's robots (active or not) whose name equals `name` ignoring case, by id. */
export function robotsNamed(store: Store, fleetId: string, name: string): Readonly<RobotRecord>[] {
  const want = name.toLowerCase();
  const out: Readonly<RobotRecord>[] = [];
  for (const key of store.index.getKeys(prefixRange(keyPrefix(ROBOTS_BY_NAME, fleetId, folded(name))))) {
    const r = store.records.robot(lastSegment(key));
    if (r && r.fleetId === fleetId && r.name.toLowerCase() === want) out.push(r);
  }
  return out;
}

/** Files every robot under its name once (stores from before the index); idempotent, async write. */
export async function ensureRobotNameIndex(store: Store): Promise<void> {
  if (store.meta.get(BACKFILLED) === 1) return;
  await store.root.transaction(() => {
    for (const key of store.index.getKeys(prefixRange(`${ROBOTS_BY_FLEET}/`))) {
      const r = store.robots.get(lastSegment(key));
      if (r) putRobotNameKey(store, r);
    }
    store.meta.putSync(BACKFILLED, 1);
  });
}
