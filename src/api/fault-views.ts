/**
 * The published fault view and the fault list, shared by the fault routes and any other reader of
 * faults (the Agent API's `query-entities` kind `fault`): routes never import each other.
 */
import { faultsOf } from '../fleet/safety/faults/faults.js';
import type { FaultRecord } from '../fleet/safety/faults/records.js';
import type { Store } from '../store/lmdb.js';
import { defineList, type FleetList, type ListQuery } from './list-reader.js';
import { FAULTS_LIMIT, type FaultView } from './schemas/faults.js';

/** The published view of a fault record. */
export function faultView(f: FaultRecord): FaultView {
  return {
    faultId: f.faultId,
    robotId: f.robotId,
    fleetId: f.fleetId,
    code: f.code,
    severity: f.severity,
    component: f.component,
    message: f.message,
    state: f.state,
    raisedAtMs: f.raisedAtMs,
    robotRaisedAtMs: f.robotRaisedAtMs,
    updatedAtMs: f.updatedAtMs,
    clearedAtMs: f.clearedAtMs,
    clearedBy: f.clearedBy,
  };
}

/** The fault list's query: the fleet, and the `active` / `robot_id` filters its cursors are bound to. */
export type FaultListQuery = ListQuery & { active?: boolean; robot_id?: string; cursor?: string };

/**
 * The fault list as every reader pages it (the routes here; the Agent API's `query-entities` kind
 * `fault` can declare its own with {@link faultsOf}).
 */
export const faultList = (store: Store): FleetList<FaultListQuery, FaultView> => defineList<FaultListQuery, FaultRecord, FaultView>({
  kind: 'faults',
  limit: FAULTS_LIMIT,
  filters: (q) => ({ active: q.active ?? null, robot_id: q.robot_id ?? null }),
  source: (fleet, q) => faultsOf(store, {
    fleetId: fleet.fleetId,
    ...(q.robot_id !== undefined ? { robotId: q.robot_id } : {}),
    ...(q.active !== undefined ? { active: q.active } : {}),
  }),
  view: faultView,
});

