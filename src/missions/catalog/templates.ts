/**
 * Mission templates in LMDB (`templates` db by missionId) with these `index` keys:
 *   templatesByFleet/<fleetId>/<missionId>      the fleet's templates (= the operation's steps)
 *   templatesByFeature/<featureId>/<missionId>  feature delete refuses while one exists
 * A delete is refused (409) while a schedule references the template or a run executes it; those
 * indexes belong to scheduling and runs, which answer through {@link TemplateUsers}.
 *
 * Every write is one asynchronous LMDB transaction that re-checks what it depends on, so a check and
 * the write it guards cannot be separated by another request. Each change bumps `version` and adds an
 * event on the template's timeline (correlation id = missionId).
 */
import { randomUUID } from 'node:crypto';
import { ApiError, apiError } from '../../errors/catalog.js';
import type { EventLog } from '../../events/index.js';
import { indexRange, keyPrefix, lastSegment } from '../../store/keys.js';
import { keysetOver, type Keyset } from '../../store/keyset.js';
import type { Store } from '../../store/lmdb.js';
import type { FleetRecord } from '../../store/records.js';
import { getFeature } from './features.js';
import { featureUseKey, TEMPLATES_BY_FLEET, templateIndexKey } from './keys.js';
import { operationOrNew, putNewOperation } from './operation.js';
import type { MissionStepRecord, OperationRecord, TemplateRecord } from './records.js';
import { missingCapability, type AdvertisedCapabilities } from './robot-capabilities.js';
import { robotRecord } from '../../store/identity-reads.js';


/** A step as a request gives it: `stepId` names an existing step to keep or edit. */
export interface StepInput {
  stepId?: string;
  kind?: string;
  config?: Record<string, unknown>;
}

export interface NewTemplateInput {
  name: string;
  featureId: string;
  enabled?: boolean;
  capabilities?: string[];
  roster?: string[];
  steps: StepInput[];
  parameters?: Record<string, unknown>;
  prerequisites?: TemplateRecord['prerequisites'];
  priority?: number;
}

/** An edit: omitted fields are kept; see {@link mergeSteps} for `steps`. */
export type TemplatePatch = Partial<Omit<NewTemplateInput, 'enabled'>>;

/** A template by id (any fleet), or undefined. */
export function getTemplate(store: Store, missionId: string): TemplateRecord | undefined {
  return store.templates.get(missionId);
}

/**
 * A template of `fleetId`.
 * @throws ApiError 404 `template_not_found` (also for a template of another fleet)
 */
export function requireTemplate(store: Store, fleetId: string, missionId: string): TemplateRecord {
  const t = store.templates.get(missionId);
  if (t === undefined || t.fleetId !== fleetId) throw apiError('template_not_found', { missionId });
  return t;
}

/** The fleet's templates, ordered by missionId. */
export function listTemplates(store: Store, fleetId: string): TemplateRecord[] {
  const out: TemplateRecord[] = [];
  for (const id of indexRange(store, `${TEMPLATES_BY_FLEET}/${fleetId}`)) {
    const t = store.templates.get(id);
    if (t) out.push(t);
  }
  return out;
}

/**
 * The fleet's templates, ordered by missionId, as a keyset (`GET …/mission-templates` pages it);
 * `where` skips the templates a list's filters refuse.
 */
export function templatesOf(store: Store, fleetId: string, where?: (t: TemplateRecord) => boolean): Keyset<TemplateRecord> {
  return keysetOver(store.index, { prefix: keyPrefix(TEMPLATES_BY_FLEET, fleetId) }, (key) => {
    const t = store.templates.get(lastSegment(key));
    return t && t.fleetId === fleetId && (where === undefined || where(t)) ? t : undefined;
  });
}

/** Appends an event on the template's timeline. */
export function templateEvent(events: EventLog, t: TemplateRecord, atMs: number, kind: string, data: Record<string, unknown> = {}): void {
  events.append({ fleetId: t.fleetId, correlationId: t.missionId, atMs, kind, subject: { type: 'template', id: t.missionId }, data: { version: t.version, ...data } });
}

/**
 * Roster rule 1: the robot is an active member of the fleet and has every required capability,
 * registered or advertised in its latest Hello (the set the dispatcher counts).
 * @throws ApiError 404 `robot_not_active_member`; 400 `robot_missing_capability`
 */
export function checkRosterRobot(store: Store, advertised: AdvertisedCapabilities, fleetId: string, robotId: string, capabilities: readonly string[]): void {
  const robot = robotRecord(store, robotId);
  if (robot === undefined || robot.fleetId !== fleetId || !robot.active) throw apiError('robot_not_active_member', { robotId });
  const missing = missingCapability(advertised, robot, capabilities);
  if (missing !== undefined) throw apiError('robot_missing_capability', { robotId, capability: missing });
}

/**
 * The new step list: steps are taken in the given order; a step naming an existing `stepId` keeps
 * that step's `kind` and `config` unless given (omitted configuration is preserved); a step without
 * `stepId` (or with an unknown one) is new and needs `kind`. Existing steps not listed are dropped.
 * @throws ApiError 400 `invalid_body` for a new step without kind or a repeated stepId
 */
export function mergeSteps(old: readonly MissionStepRecord[], given: readonly StepInput[]): MissionStepRecord[] {
  const seen = new Set<string>();
  return given.map((s, i) => {
    const prev = s.stepId === undefined ? undefined : old.find((o) => o.stepId === s.stepId);
    const stepId = s.stepId ?? randomUUID();
    if (seen.has(stepId)) throw apiError('invalid_body', { detail: `steps.${i}: stepId ${stepId} appears twice` });
    seen.add(stepId);
    const kind = s.kind ?? prev?.kind;
    if (kind === undefined) throw apiError('invalid_body', { detail: `steps.${i}: kind is required for a new step` });
    return { stepId, kind, config: s.config ?? prev?.config ?? {} };
  });
}

function uniq(xs: readonly string[]): string[] {
  return [...new Set(xs)];
}

/**
 * A new template record (nothing written): roster robots must qualify, steps are merged.
 * @throws ApiError 404 `robot_not_active_member`; 400 `robot_missing_capability`, `invalid_body` (steps)
 */
export function newTemplateRecord(store: Store, advertised: AdvertisedCapabilities, fleet: FleetRecord, input: NewTemplateInput, nowMs: number): TemplateRecord {
  const capabilities = uniq(input.capabilities ?? []);
  const roster = uniq(input.roster ?? []);
  for (const r of roster) checkRosterRobot(store, advertised, fleet.fleetId, r, capabilities);
  return {
    missionId: randomUUID(),
    orgId: fleet.orgId,
    fleetId: fleet.fleetId,
    name: input.name,
    featureId: input.featureId,
    enabled: input.enabled ?? true,
    capabilities,
    roster,
    steps: mergeSteps([], input.steps),
    parameters: input.parameters ?? {},
    prerequisites: input.prerequisites ?? {},
    priority: input.priority ?? 0,
    createdAtMs: nowMs,
    updatedAtMs: nowMs,
    version: 1,
  };
}

/**
 * Inside a write transaction, before any write: why the new template cannot be stored, or null.
 * Re-checked in the transaction because the feature may be deleted concurrently.
 */
export function templateRefusal(store: Store, t: TemplateRecord): ApiError | null {
  if (t.featureId !== null && getFeature(store, t.fleetId, t.featureId) === undefined) return apiError('feature_not_found', { featureId: t.featureId });
  return null;
}

/**
 * Inside a write transaction (after {@link templateRefusal}): stores the template with its index
 * keys and `template.created` event, and the fleet's operation when it comes with this template
 * (`operation` from {@link operationOrNew} in the same transaction).
 */
export function putNewTemplateInTxn(store: Store, events: EventLog, t: TemplateRecord, operation: { op: OperationRecord; created: boolean }, nowMs: number): void {
  if (operation.created) putNewOperation(store, events, operation.op, nowMs);
  store.templates.putSync(t.missionId, t);
  store.index.putSync(templateIndexKey(t.fleetId, t.missionId), true);
  if (t.featureId !== null) store.index.putSync(featureUseKey(t.featureId, t.missionId), true);
  templateEvent(events, t, nowMs, 'template.created', { name: t.name, enabled: t.enabled, operationId: operation.op.operationId });
}

/**
 * Creates a template (and the fleet's operation with the first one) in one write transaction.
 * `alsoInTxn` runs in it after the checks, before the writes (the caller commits its idempotent
 * answer there); it must not throw.
 * @throws ApiError 404 `feature_not_found` / `robot_not_active_member`; 400 `robot_missing_capability`,
 *   `invalid_body` (steps)
 */
export async function createTemplate(
  store: Store,
  events: EventLog,
  advertised: AdvertisedCapabilities,
  fleet: FleetRecord,
  input: NewTemplateInput,
  nowMs: number,
  alsoInTxn?: (t: TemplateRecord, operation: OperationRecord) => void,
): Promise<{ template: TemplateRecord; operation: OperationRecord; operationCreated: boolean }> {
  const t = newTemplateRecord(store, advertised, fleet, input, nowMs);
  const out = await store.root.transaction(() => {
    const refused = templateRefusal(store, t);
    if (refused !== null) return refused;
    const operation = operationOrNew(store, fleet, nowMs);
    alsoInTxn?.(t, operation.op);
    putNewTemplateInTxn(store, events, t, operation, nowMs);
    return { template: t, operation: operation.op, operationCreated: operation.created };
  });
  if (out instanceof ApiError) throw out;
  return out;
}

/**
 * Applies `change` to a stored template atomically (version bumped, event added). `change` returns
 * the next record, null for "nothing to change" (no write, no event), or an error to refuse.
 * @throws ApiError 404 `template_not_found`, or the error `change` returned
 */
export async function changeTemplate(
  store: Store,
  events: EventLog,
  fleetId: string,
  missionId: string,
  change: (t: TemplateRecord) => TemplateRecord | null | ApiError,
  nowMs: number,
  kind: string,
  data: (t: TemplateRecord) => Record<string, unknown> = () => ({}),
): Promise<{ template: TemplateRecord; changed: boolean }> {
  const out = await store.root.transaction((): { template: TemplateRecord; changed: boolean } | ApiError => {
    const cur = store.templates.get(missionId);
    if (cur === undefined || cur.fleetId !== fleetId) return apiError('template_not_found', { missionId });
    const next = change(cur);
    if (next instanceof ApiError) return next;
    if (next === null) return { template: cur, changed: false };
    const rec: TemplateRecord = { ...next, version: cur.version + 1, updatedAtMs: nowMs };
    if (rec.featureId !== cur.featureId) {
      if (rec.featureId === null || getFeature(store, fleetId, rec.featureId) === undefined) return apiError('feature_not_found', { featureId: rec.featureId ?? '' });
      if (cur.featureId !== null) store.index.removeSync(featureUseKey(cur.featureId, missionId));
      store.index.putSync(featureUseKey(rec.featureId, missionId), true);
    }
    store.templates.putSync(missionId, rec);
    templateEvent(events, rec, nowMs, kind, data(rec));
    return { template: rec, changed: true };
  });
  if (out instanceof ApiError) throw out;
  return out;
}

/**
 * Edits a template: omitted fields, and omitted step configuration, are preserved.
 * @throws ApiError as {@link createTemplate}, 404 `template_not_found`
 */
export async function updateTemplate(store: Store, events: EventLog, advertised: AdvertisedCapabilities, fleetId: string, missionId: string, patch: TemplatePatch, nowMs: number): Promise<TemplateRecord> {
  const cur = requireTemplate(store, fleetId, missionId);
  const capabilities = patch.capabilities !== undefined ? uniq(patch.capabilities) : cur.capabilities;
  const roster = patch.roster !== undefined ? uniq(patch.roster) : cur.roster;
  // Listed robots must qualify for the capabilities the template will have after the edit.
  if (patch.roster !== undefined || patch.capabilities !== undefined) for (const r of roster) checkRosterRobot(store, advertised, fleetId, r, capabilities);
  const steps = patch.steps !== undefined ? mergeSteps(cur.steps, patch.steps) : undefined;
  const { template } = await changeTemplate(
    store,
    events,
    fleetId,
    missionId,
    (t) => ({
      ...t,
      ...(patch.name !== undefined ? { name: patch.name } : {}),
      ...(patch.featureId !== undefined ? { featureId: patch.featureId } : {}),
      ...(patch.parameters !== undefined ? { parameters: patch.parameters } : {}),
      ...(patch.prerequisites !== undefined ? { prerequisites: patch.prerequisites } : {}),
      ...(patch.priority !== undefined ? { priority: patch.priority } : {}),
      // Steps merged against the record read in this transaction, so a concurrent edit is not lost.
      ...(steps !== undefined && patch.steps !== undefined ? { steps: mergeSteps(t.steps, patch.steps) } : {}),
      capabilities,
      roster,
    }),
    nowMs,
    'template.updated',
    () => ({ fields: Object.keys(patch).sort() }),
  );
  return template;
}

/**
 * Sets the template's enabled state (spec: Template enabled state). Setting the current value again
 * changes nothing (no new version, no event).
 */
export async function setTemplateEnabled(store: Store, events: EventLog, fleetId: string, missionId: string, enabled: boolean, nowMs: number): Promise<TemplateRecord> {
  const { template } = await changeTemplate(
    store,
    events,
    fleetId,
    missionId,
    (t) => (t.enabled === enabled ? null : { ...t, enabled }),
    nowMs,
    enabled ? 'template.enabled' : 'template.disabled',
  );
  return template;
}

/**
 * Who may still use a template, asked inside the delete's transaction. Scheduling and runs own those
 * indexes (and sit above the catalog), so they are passed in: src/missions/scheduling/template-users.ts.
 */
export interface TemplateUsers {
  /** A non-cancelled schedule referencing the template, if any. */
  schedule(missionId: string): string | undefined;
  /** An unfinished run of the template, if any. */
  activeRun(missionId: string): string | undefined;
}

/**
 * Deletes a template unless a schedule references it or a robot is running it.
 * @throws ApiError 404 `template_not_found`; 409 `template_in_use`
 */
/**
 * Sets template priorities as one batch: every mission must be a template of `fleetId`, or nothing
 * is written.
 * @throws ApiError `template_not_found`
 */
export async function setTemplatePriorities(store: Store, fleetId: string, updates: readonly { missionId: string; priority: number }[], nowMs: number): Promise<TemplateRecord[]> {
  let missing: string | null = null;
  const written: TemplateRecord[] = [];
  await store.root.transaction(() => {
    const recs: TemplateRecord[] = [];
    for (const u of updates) {
      const t = store.templates.get(u.missionId);
      if (!t || t.fleetId !== fleetId) {
        missing = u.missionId;
        return;
      }
      recs.push({ ...t, priority: u.priority, updatedAtMs: nowMs });
    }
    for (const t of recs) {
      store.templates.putSync(t.missionId, t);
      written.push(t);
    }
  });
  if (missing !== null) throw apiError('template_not_found', { missionId: missing });
  return written;
}

export async function deleteTemplate(store: Store, events: EventLog, users: TemplateUsers, fleetId: string, missionId: string, nowMs: number): Promise<TemplateRecord> {
  const out = await store.root.transaction((): TemplateRecord | ApiError => {
    const cur = store.templates.get(missionId);
    if (cur === undefined || cur.fleetId !== fleetId) return apiError('template_not_found', { missionId });
    const schedule = users.schedule(missionId);
    if (schedule !== undefined) return apiError('template_in_use', { missionId, reason: `referenced by schedule ${schedule}` }, { details: { scheduleId: schedule } });
    const run = users.activeRun(missionId);
    if (run !== undefined) return apiError('template_in_use', { missionId, reason: `being run by a robot (run ${run})` }, { details: { runId: run } });
    store.templates.removeSync(missionId);
    store.index.removeSync(templateIndexKey(fleetId, missionId));
    if (cur.featureId !== null) store.index.removeSync(featureUseKey(cur.featureId, missionId));
    templateEvent(events, cur, nowMs, 'template.deleted');
    return cur;
  });
  if (out instanceof ApiError) throw out;
  return out;
}
