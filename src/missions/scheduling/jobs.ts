/**
 * submit-job's writes: a new template and its schedule, committed in ONE LMDB write transaction with
 * their events and the request's idempotent answer. A crash leaves all of them or none, so a retry
 * with the same Idempotency-Key finds exactly one template and one schedule (replayed), or none (and
 * runs afresh): never an enabled template without its schedule.
 */
import type { EventLog } from '../../events/index.js';
import type { Store } from '../../store/lmdb.js';
import type { FleetRecord } from '../../store/records.js';
import { operationOrNew } from '../catalog/operation.js';
import type { OperationRecord, TemplateRecord } from '../catalog/records.js';
import type { ScheduleRecord } from './records.js';
import type { MissionScheduling } from './scheduling-service.js';
import { templateRefusal } from '../catalog/templates.js';
import type { CatalogWrites } from '../catalog/catalog-writes.js';

/**
 * Commits template `t` (and the fleet's operation with its first template) and schedule `s` (built
 * by `missions.prepare` for `t`) in one transaction, then arms the schedule. Every check runs before
 * the first write; `alsoInTxn` runs after the checks and must not throw.
 * @throws ApiError `feature_not_found`, `schedule_limit` (nothing written)
 */
export async function commitJob(
  store: Store,
  catalog: Pick<CatalogWrites, 'putNewTemplateInTxn'>,
  events: EventLog,
  missions: Pick<MissionScheduling, 'refusal' | 'putNewInTxn' | 'armNew'>,
  fleet: FleetRecord,
  t: TemplateRecord,
  s: ScheduleRecord,
  nowMs: number,
  alsoInTxn?: (operation: OperationRecord) => void,
): Promise<void> {
  const refused = await store.root.transaction(() => {
    const why = templateRefusal(store, t) ?? missions.refusal(fleet.fleetId);
    if (why !== null) return why;
    const operation = operationOrNew(store, fleet, nowMs);
    alsoInTxn?.(operation.op);
    catalog.putNewTemplateInTxn(events, t, operation, nowMs);
    missions.putNewInTxn(s);
    return null;
  });
  if (refused !== null) throw refused;
  missions.armNew(s);
}
