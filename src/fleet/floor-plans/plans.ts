/**
 * The floor plans database (`floorPlans`, one record per fleet): this module alone writes it. The
 * routes (src/api/routes/floor-plan.ts) read and change plans through these functions.
 */
import type { Store } from '../../store/lmdb.js';
import type { FloorPlanRecord, ReferencePoint } from './records.js';

/** The fleet's floor plan, or undefined. */
export function floorPlanOf(store: Store, fleetId: string): FloorPlanRecord | undefined {
  return store.floorPlans.get(fleetId);
}

/** Stores (replaces) the fleet's floor plan; resolves once committed. */
export async function saveFloorPlan(store: Store, record: FloorPlanRecord): Promise<void> {
  await store.floorPlans.put(record.fleetId, record);
}

/**
 * Sets the placement of the fleet's plan. Read and written in one transaction: an upload meanwhile
 * keeps its image and gets this placement. Undefined when the fleet has no plan.
 */
export async function placeFloorPlan(store: Store, fleetId: string, points: ReferencePoint[]): Promise<FloorPlanRecord | undefined> {
  return store.root.transaction(() => {
    const cur = store.floorPlans.get(fleetId);
    if (cur === undefined) return undefined;
    const next = { ...cur, placement: points };
    store.floorPlans.putSync(fleetId, next);
    return next;
  });
}

/** Removes the fleet's floor plan; false when it had none. */
export async function removeFloorPlan(store: Store, fleetId: string): Promise<boolean> {
  return store.floorPlans.remove(fleetId);
}
