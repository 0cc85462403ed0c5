/**
 * The catalog's records in LMDB: features (`features` db), mission templates (`templates`) and the
 * fleet operation (`operations`). Scheduling and runs read them; only the catalog writes them.
 * msgpack-safe only.
 */

/** GeoJSON Polygon or MultiPolygon (validated on input). */
export type Geometry =
  | { type: 'Polygon'; coordinates: number[][][] }
  | { type: 'MultiPolygon'; coordinates: number[][][][] };

/** A work area that templates and jobs refer to (`feature_id`). */
export interface FeatureRecord {
  featureId: string;
  orgId: string;
  fleetId: string;
  name: string;
  geometry: Geometry;
  locked: boolean;
  lockReason: string | null;
  /** Robots currently working in the area (claimed by their runs); `control-feature reset` clears them. */
  holders: string[];
  /**
   * Bumped by `control-feature reset`, `reset_step` and `reset_decomposers`: work split from the area
   * under an older epoch is void, robots re-decompose it from scratch on their next run.
   */
  decompositionEpoch: number;
  createdAtMs: number;
  updatedAtMs: number;
}

export interface MissionStepRecord {
  /** Stable id of the step within the template (kept across edits). */
  stepId: string;
  /** e.g. "drive_to", "mow_area", "wait", "dock". */
  kind: string;
  config: Record<string, unknown>;
}

/** A mission template: one step of the fleet's operation. */
export interface TemplateRecord {
  missionId: string;
  orgId: string;
  fleetId: string;
  name: string;
  featureId: string | null;
  enabled: boolean;
  /** Capabilities a robot must advertise to take the template. */
  capabilities: string[];
  /** Robot ids allowed to take it; empty = every active robot of the fleet. */
  roster: string[];
  steps: MissionStepRecord[];
  parameters: Record<string, unknown>;
  /** Conditions checked before dispatch (e.g. minimum battery). */
  prerequisites: { minBatteryPct?: number; requiresDocked?: boolean };
  /** Higher runs first when several schedules compete for robots. */
  priority: number;
  createdAtMs: number;
  updatedAtMs: number;
  /** Increments on every change; the live operation reports the version it has adopted. */
  version: number;
}

export type OperationState = 'running' | 'paused' | 'stopped';

/** The fleet's one long-lived operation, created with the fleet's first template. */
export interface OperationRecord {
  operationId: string;
  orgId: string;
  fleetId: string;
  name: string;
  state: OperationState;
  /** Bumped by `reset` and `restart`: work of an older epoch is not resumed. */
  epoch: number;
  createdAtMs: number;
  updatedAtMs: number;
}

// The databases this module owns, typed on the store (see StoreDatabases in src/store/lmdb.ts).
declare module '../../store/lmdb.js' {
  interface StoreDatabases {
    features: FeatureRecord;
    templates: TemplateRecord;
    operations: OperationRecord;
  }
}
