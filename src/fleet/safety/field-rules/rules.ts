/**
 * Field rules: create, edit, enable/disable, delete and read, each change committed in one
 * transaction with the fleet's new rule set version and its event (timeline: correlation id =
 * directiveId). Delivery to robots is delivery.ts; this module only keeps the records.
 */
import { randomUUID } from 'node:crypto';
import { ApiError, apiError } from '../../../errors/catalog.js';
import type { EventLog } from '../../../events/index.js';
import { validateGeometry } from '../../../missions/catalog/geometry.js';
import type { Geometry } from '../../../missions/catalog/records.js';
import { countPrefix, keyPrefix, lastSegment } from '../../../store/keys.js';
import { keysetOver, type Keyset } from '../../../store/keyset.js';
import type { Store } from '../../../store/lmdb.js';
import type { FleetRecord } from '../../../store/records.js';
import type { FieldRuleParameters, FieldRuleRecord, FieldRuleType } from './records.js';
import { ruleIndexKey, RULES_BY_FLEET, versionKey } from './keys.js';

/** Most rules one fleet may hold (every robot of the fleet receives all enabled ones). */
export const MAX_RULES_PER_FLEET = 100;
/** Most polygon positions over all of a fleet's rules: keeps the set a robot receives under ~1 MB. */
export const MAX_POSITIONS_PER_FLEET = 50_000;
/** Bounds of the parameters (also published in the schema). */
export const SPEED_LIMIT_BOUNDS = { min: 0.05, max: 20 } as const;
export const WAIT_S_BOUNDS = { min: 1, max: 3600 } as const;

/** A rule as a caller gives it: the whole rule (an edit replaces every field but `enabled` when omitted). */
export interface FieldRuleInput {
  name: string;
  type: FieldRuleType;
  geometry: Geometry;
  parameters: FieldRuleParameters;
  enabled?: boolean;
}

/** Filters of a fleet's rule list. */
export interface FieldRuleFilter {
  enabled?: boolean;
  type?: FieldRuleType;
}

/** The fleet's current rule set version (0: no rule ever changed). */
export function ruleSetVersion(store: Store, fleetId: string): number {
  const v = store.meta.get(versionKey(fleetId));
  return typeof v === 'number' ? v : 0;
}

/** A rule of `fleetId`, or undefined (also when it belongs to another fleet). */
export function getFieldRule(store: Store, fleetId: string, directiveId: string): FieldRuleRecord | undefined {
  const r = store.fieldRules.get(directiveId);
  return r !== undefined && r.fleetId === fleetId ? r : undefined;
}

/**
 * A rule of `fleetId`.
 * @throws ApiError 404 `field_rule_not_found`
 */
export function requireFieldRule(store: Store, fleetId: string, directiveId: string): FieldRuleRecord {
  const r = getFieldRule(store, fleetId, directiveId);
  if (r === undefined) throw apiError('field_rule_not_found', { directiveId });
  return r;
}

/** The fleet's rules ordered by directive id, optionally filtered, as a keyset (lists page it). */
export function fieldRulesOf(store: Store, fleetId: string, filter: FieldRuleFilter = {}): Keyset<FieldRuleRecord> {
  return keysetOver(store.index, { prefix: keyPrefix(RULES_BY_FLEET, fleetId) }, (key) => {
    const r = store.fieldRules.get(lastSegment(key));
    if (r === undefined || r.fleetId !== fleetId) return undefined;
    if (filter.enabled !== undefined && r.enabled !== filter.enabled) return undefined;
    if (filter.type !== undefined && r.type !== filter.type) return undefined;
    return r;
  });
}

/** Every enabled rule of the fleet, ordered by directive id (what robots receive). */
export function enabledFieldRules(store: Store, fleetId: string): FieldRuleRecord[] {
  const page = fieldRulesOf(store, fleetId, { enabled: true }).page(null, MAX_RULES_PER_FLEET + 1);
  return page.items;
}

/**
 * Checks the parameters a type takes (the schema bounds each value; this fixes which are required or refused).
 * @throws ApiError 400 `invalid_body` naming `field_rule.parameters.…`
 */
export function checkParameters(type: FieldRuleType, p: FieldRuleParameters): FieldRuleParameters {
  const bad = (detail: string): ApiError => apiError('invalid_body', { detail: `field_rule.parameters.${detail}` });
  if (type === 'speed_limit') {
    if (p.waitS !== undefined) throw bad('wait_s is not taken by type speed_limit');
    if (p.maxSpeedMps === undefined) throw bad('max_speed_mps is required for type speed_limit');
    return { maxSpeedMps: p.maxSpeedMps };
  }
  if (type === 'stop_and_wait') {
    if (p.maxSpeedMps !== undefined) throw bad('max_speed_mps is not taken by type stop_and_wait');
    if (p.waitS === undefined) throw bad('wait_s is required for type stop_and_wait');
    return { waitS: p.waitS };
  }
  if (p.maxSpeedMps !== undefined) throw bad('max_speed_mps is not taken by type keep_out');
  if (p.waitS !== undefined) throw bad('wait_s is not taken by type keep_out');
  return {};
}

function checkInput(input: FieldRuleInput): FieldRuleParameters {
  try {
    validateGeometry(input.geometry);
  } catch (err: unknown) {
    if (err instanceof ApiError && err.id === 'invalid_geometry') {
      throw apiError('invalid_geometry', { detail: `field_rule.geometry: ${err.message.replace(/^Invalid geometry: /, '').replace(/\.$/, '')}` });
    }
    throw err;
  }
  return checkParameters(input.type, input.parameters);
}

function positions(g: Geometry): number {
  const polygons = g.type === 'Polygon' ? [g.coordinates] : g.coordinates;
  let n = 0;
  for (const rings of polygons) for (const ring of rings) n += ring.length;
  return n;
}

/** Inside a transaction: refuses a change that would put the fleet over its bounds. */
function checkFleetBounds(store: Store, fleetId: string, replacing: string | null, geometry: Geometry): ApiError | null {
  const count = countPrefix(store.index, keyPrefix(RULES_BY_FLEET, fleetId));
  if (replacing === null && count >= MAX_RULES_PER_FLEET) {
    return apiError('field_rule_limit', { fleetId, detail: `it already has ${MAX_RULES_PER_FLEET} field rules` });
  }
  let total = positions(geometry);
  for (const r of fieldRulesOf(store, fleetId).page(null, MAX_RULES_PER_FLEET + 1).items) {
    if (r.directiveId !== replacing) total += positions(r.geometry);
  }
  if (total > MAX_POSITIONS_PER_FLEET) {
    return apiError('field_rule_limit', { fleetId, detail: `its field rules would hold ${total} positions, more than ${MAX_POSITIONS_PER_FLEET}` });
  }
  return null;
}

/** Inside a transaction: the fleet's next rule set version, written. */
function bumpVersion(store: Store, fleetId: string): number {
  const next = ruleSetVersion(store, fleetId) + 1;
  store.meta.putSync(versionKey(fleetId), next);
  return next;
}

function ruleEvent(events: EventLog, r: FieldRuleRecord, atMs: number, kind: string, data: Record<string, unknown> = {}): void {
  events.append({
    fleetId: r.fleetId,
    correlationId: r.directiveId,
    atMs,
    kind,
    subject: { type: 'field_rule', id: r.directiveId },
    data: { ruleSetVersion: r.ruleSetVersion, ...data },
  });
}

/**
 * Creates a rule (enabled unless `enabled` is false); the server mints its directive id.
 * @throws ApiError 400 `invalid_body` / `invalid_geometry`; 409 `field_rule_limit`
 */
export async function createFieldRule(store: Store, events: EventLog, fleet: FleetRecord, input: FieldRuleInput, nowMs: number): Promise<FieldRuleRecord> {
  const parameters = checkInput(input);
  const out = await store.root.transaction((): FieldRuleRecord | ApiError => {
    const bound = checkFleetBounds(store, fleet.fleetId, null, input.geometry);
    if (bound !== null) return bound;
    const r: FieldRuleRecord = {
      directiveId: randomUUID(),
      orgId: fleet.orgId,
      fleetId: fleet.fleetId,
      name: input.name,
      type: input.type,
      geometry: input.geometry,
      parameters,
      enabled: input.enabled ?? true,
      ruleSetVersion: bumpVersion(store, fleet.fleetId),
      createdAtMs: nowMs,
      updatedAtMs: nowMs,
    };
    store.fieldRules.putSync(r.directiveId, r);
    store.index.putSync(ruleIndexKey(r.fleetId, r.directiveId), true);
    ruleEvent(events, r, nowMs, 'field_rule.created', { name: r.name, type: r.type, enabled: r.enabled });
    return r;
  });
  if (out instanceof ApiError) throw out;
  return out;
}

/**
 * Replaces a rule's name, type, geometry and parameters (and `enabled` when given).
 * @throws ApiError 404 `field_rule_not_found`; 400; 409 `field_rule_limit`
 */
export async function editFieldRule(store: Store, events: EventLog, fleetId: string, directiveId: string, input: FieldRuleInput, nowMs: number): Promise<FieldRuleRecord> {
  const parameters = checkInput(input);
  const out = await store.root.transaction((): FieldRuleRecord | ApiError => {
    const cur = getFieldRule(store, fleetId, directiveId);
    if (cur === undefined) return apiError('field_rule_not_found', { directiveId });
    const bound = checkFleetBounds(store, fleetId, directiveId, input.geometry);
    if (bound !== null) return bound;
    const r: FieldRuleRecord = {
      ...cur,
      name: input.name,
      type: input.type,
      geometry: input.geometry,
      parameters,
      enabled: input.enabled ?? cur.enabled,
      ruleSetVersion: bumpVersion(store, fleetId),
      updatedAtMs: nowMs,
    };
    store.fieldRules.putSync(directiveId, r);
    ruleEvent(events, r, nowMs, 'field_rule.updated', { name: r.name, type: r.type, enabled: r.enabled });
    return r;
  });
  if (out instanceof ApiError) throw out;
  return out;
}

/**
 * Enables or disables a rule. Setting the state it already has changes nothing (no new version,
 * no event) and returns the rule as it is.
 * @throws ApiError 404 `field_rule_not_found`
 */
export async function setFieldRuleEnabled(store: Store, events: EventLog, fleetId: string, directiveId: string, enabled: boolean, nowMs: number): Promise<FieldRuleRecord> {
  const out = await store.root.transaction((): FieldRuleRecord | ApiError => {
    const cur = getFieldRule(store, fleetId, directiveId);
    if (cur === undefined) return apiError('field_rule_not_found', { directiveId });
    if (cur.enabled === enabled) return cur;
    const r: FieldRuleRecord = { ...cur, enabled, ruleSetVersion: bumpVersion(store, fleetId), updatedAtMs: nowMs };
    store.fieldRules.putSync(directiveId, r);
    ruleEvent(events, r, nowMs, enabled ? 'field_rule.enabled' : 'field_rule.disabled');
    return r;
  });
  if (out instanceof ApiError) throw out;
  return out;
}

/**
 * Deletes a rule; returns the record as it was, with the version its removal produced.
 * @throws ApiError 404 `field_rule_not_found`
 */
export async function deleteFieldRule(store: Store, events: EventLog, fleetId: string, directiveId: string, nowMs: number): Promise<FieldRuleRecord> {
  const out = await store.root.transaction((): FieldRuleRecord | ApiError => {
    const cur = getFieldRule(store, fleetId, directiveId);
    if (cur === undefined) return apiError('field_rule_not_found', { directiveId });
    const r: FieldRuleRecord = { ...cur, ruleSetVersion: bumpVersion(store, fleetId), updatedAtMs: nowMs };
    store.fieldRules.removeSync(directiveId);
    store.index.removeSync(ruleIndexKey(fleetId, directiveId));
    ruleEvent(events, r, nowMs, 'field_rule.deleted');
    return r;
  });
  if (out instanceof ApiError) throw out;
  return out;
}
