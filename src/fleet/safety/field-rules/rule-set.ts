/**
 * The wire form of a fleet's rule set (proto FieldRuleSet): every enabled rule, GeoJSON rings turned
 * into the link's unclosed rings of GeoPoints.
 */
import { create } from '@bufbuild/protobuf';
import { FieldRuleSetSchema, FieldRuleType as WireType, type FieldRuleSet } from '../../../gen/fleetgw/v1/robot_link_pb.js';
import type { Geometry } from '../../../missions/catalog/records.js';
import type { Store } from '../../../store/lmdb.js';
import type { FieldRuleRecord, FieldRuleType } from './records.js';
import { enabledFieldRules, ruleSetVersion } from './rules.js';

const WIRE_TYPE: Record<FieldRuleType, WireType> = {
  speed_limit: WireType.SPEED_LIMIT,
  keep_out: WireType.KEEP_OUT,
  stop_and_wait: WireType.STOP_AND_WAIT,
};

function polygonsOf(g: Geometry): { rings: { ring: { latitude: number; longitude: number }[] }[] }[] {
  const polygons = g.type === 'Polygon' ? [g.coordinates] : g.coordinates;
  return polygons.map((rings) => ({
    // GeoJSON rings are closed; the link's are not (the last point joins the first).
    rings: rings.map((ring) => ({ ring: ring.slice(0, -1).map(([lon, lat]) => ({ latitude: lat ?? 0, longitude: lon ?? 0 })) })),
  }));
}

/** Builds the wire set of `rules` at `version`. */
export function toRuleSet(version: number, rules: readonly FieldRuleRecord[]): FieldRuleSet {
  return create(FieldRuleSetSchema, {
    version: BigInt(version),
    rules: rules.map((r) => ({
      directiveId: r.directiveId,
      type: WIRE_TYPE[r.type],
      name: r.name,
      polygons: polygonsOf(r.geometry),
      maxSpeedMps: r.parameters.maxSpeedMps ?? 0,
      waitS: r.parameters.waitS ?? 0,
    })),
  });
}

/**
 * The fleet's current set as committed. The version is read before and after the rules: a change
 * committing in between (lmdb-js renews its read snapshot after a commit) is read again, so a new
 * version is never paired with old rules. Bounded: after a few tries under a storm of changes the
 * set goes out under the version read *before* its rules, which is never newer than them, so the
 * next change's set (sent to every online robot) supersedes it.
 */
export function currentRuleSet(store: Store, fleetId: string): FieldRuleSet {
  let version = ruleSetVersion(store, fleetId);
  let rules = enabledFieldRules(store, fleetId);
  for (let i = 0; i < 5; i++) {
    const after = ruleSetVersion(store, fleetId);
    if (after === version) break;
    version = after;
    rules = enabledFieldRules(store, fleetId);
  }
  return toRuleSet(version, rules);
}
