/**
 * Field rules in LMDB (`fieldRules` db by directive id; `fieldRulesByFleet/<fleet>/<directive>` in
 * `index`; the fleet's rule set version in `meta` under `fieldRuleSetVersion/<fleet>`). msgpack-safe only.
 */
import type { Geometry } from '../../../missions/catalog/records.js';

/** What a rule makes robots do inside its zone (docs/field-rules.md). */
export const FIELD_RULE_TYPES = ['speed_limit', 'keep_out', 'stop_and_wait'] as const;
export type FieldRuleType = (typeof FIELD_RULE_TYPES)[number];

/** A rule's parameters; which ones a type takes is fixed by {@link checkParameters} (rules.ts). */
export interface FieldRuleParameters {
  /** speed_limit: the cap inside the zone, m/s. */
  maxSpeedMps?: number;
  /** stop_and_wait: how long a robot stays stopped after entering the zone, seconds. */
  waitS?: number;
}

/** A zone with a constraint robots must obey (`directive_id`). */
export interface FieldRuleRecord {
  directiveId: string;
  orgId: string;
  fleetId: string;
  name: string;
  type: FieldRuleType;
  geometry: Geometry;
  parameters: FieldRuleParameters;
  enabled: boolean;
  /** The fleet's rule set version this rule's last change produced. */
  ruleSetVersion: number;
  createdAtMs: number;
  updatedAtMs: number;
}

// The database this module owns, typed on the store (see StoreDatabases in src/store/lmdb.ts).
declare module '../../../store/lmdb.js' {
  interface StoreDatabases {
    fieldRules: FieldRuleRecord;
  }
}
