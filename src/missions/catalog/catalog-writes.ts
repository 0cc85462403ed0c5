/**
 * The catalog's writes that another module makes as part of its own change: a robot's transfer leaves
 * the old fleet's rosters (robot administration); scheduling sets template priorities, stores a job's
 * template with its schedule, and holds and releases the feature a run works in.
 * Built over the catalog's own store (plugin `catalog` provides them as part `catalogWrites`), so the
 * writes land through the handle that may make them.
 */
import type { ApiError } from '../../errors/catalog.js';
import type { EventLog } from '../../events/index.js';
import type { Store } from '../../store/lmdb.js';
import { holdFeature, releaseFeature } from './features.js';
import type { FeatureRecord, OperationRecord, TemplateRecord } from './records.js';
import { leaveRostersSync } from './roster.js';
import { putNewTemplateInTxn, setTemplatePriorities } from './templates.js';

/** The catalog's writes for the modules built on it. */
export interface CatalogWrites {
  /** Inside the caller's transaction: the robot leaves the fleet's rosters ({@link leaveRostersSync}). */
  leaveRostersSync(events: EventLog, fleetId: string, robotId: string, nowMs: number): string[] | ApiError;
  /** Sets template priorities as one batch ({@link setTemplatePriorities}). */
  setTemplatePriorities(fleetId: string, updates: readonly { missionId: string; priority: number }[], nowMs: number): Promise<TemplateRecord[]>;
  /** Inside the caller's transaction: stores a new template, and its fleet's new operation ({@link putNewTemplateInTxn}). */
  putNewTemplateInTxn(events: EventLog, t: TemplateRecord, operation: { op: OperationRecord; created: boolean }, nowMs: number): void;
  /** The robot holds the feature ({@link holdFeature}). */
  holdFeature(events: EventLog, fleetId: string, featureId: string, robotId: string, nowMs: number): Promise<FeatureRecord>;
  /** The robot no longer holds the feature ({@link releaseFeature}). */
  releaseFeature(events: EventLog, fleetId: string, featureId: string, robotId: string, nowMs: number): Promise<FeatureRecord>;
}

/** The catalog's writes over `store` (the catalog's own). */
export function catalogWrites(store: Store): CatalogWrites {
  return {
    leaveRostersSync: (events, fleetId, robotId, nowMs) => leaveRostersSync(store, events, fleetId, robotId, nowMs),
    setTemplatePriorities: (fleetId, updates, nowMs) => setTemplatePriorities(store, fleetId, updates, nowMs),
    putNewTemplateInTxn: (events, t, operation, nowMs) => putNewTemplateInTxn(store, events, t, operation, nowMs),
    holdFeature: (events, fleetId, featureId, robotId, nowMs) => holdFeature(store, events, fleetId, featureId, robotId, nowMs),
    releaseFeature: (events, fleetId, featureId, robotId, nowMs) => releaseFeature(store, events, fleetId, featureId, robotId, nowMs),
  };
}
