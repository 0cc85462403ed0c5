/**
 * The spatial half of the matching rule (docs/objects.md, "Matching"): which tracked object of the
 * same fleet and class lies within the match radius of a detection. Objects are filed in square cells
 * one radius tall, so a lookup reads only the few cells around the detection whatever the fleet's size.
 * Pure, in memory; the tracker keeps it in step with LMDB.
 */

/** Metres per degree of latitude (mean); longitude degrees shrink with cos(latitude). */
const M_PER_DEG = 111_320;

export interface GridEntry {
  objectId: string;
  fleetId: string;
  objectClass: string;
  latitude: number;
  longitude: number;
}

/** Distance in metres between two WGS 84 points (equirectangular: exact enough at a few metres). */
export function distanceM(aLat: number, aLon: number, bLat: number, bLon: number): number {
  const dy = (bLat - aLat) * M_PER_DEG;
  const dx = (bLon - aLon) * M_PER_DEG * Math.cos(((aLat + bLat) / 2) * (Math.PI / 180));
  return Math.hypot(dx, dy);
}

export class MatchGrid {
  private readonly cells = new Map<string, Set<string>>();
  private readonly entries = new Map<string, { e: GridEntry; cell: string }>();

  constructor(readonly radiusM: number) {}

  get size(): number {
    return this.entries.size;
  }

  /** Files or moves an object. */
  put(e: GridEntry): void {
    this.remove(e.objectId);
    const cell = this.cellKey(e.fleetId, e.objectClass, ...this.cellOf(e.latitude, e.longitude));
    let set = this.cells.get(cell);
    if (!set) this.cells.set(cell, (set = new Set()));
    set.add(e.objectId);
    this.entries.set(e.objectId, { e, cell });
  }

  remove(objectId: string): void {
    const cur = this.entries.get(objectId);
    if (!cur) return;
    this.entries.delete(objectId);
    const set = this.cells.get(cur.cell);
    set?.delete(objectId);
    if (set?.size === 0) this.cells.delete(cur.cell);
  }

  /**
   * The nearest object of `fleetId` and `objectClass` within the radius of the point, skipping ids in
   * `exclude` (objects already matched by another detection of the same frame); undefined if none.
   */
  nearest(fleetId: string, objectClass: string, latitude: number, longitude: number, exclude: ReadonlySet<string>): string | undefined {
    const [cx, cy] = this.cellOf(latitude, longitude);
    // A cell is one radius wide in degrees: narrower in metres away from the equator, so more
    // columns are read there (2 each side up to 60 degrees of latitude).
    const nx = Math.ceil(1 / Math.max(Math.cos(latitude * (Math.PI / 180)), 0.05));
    let best: string | undefined;
    let bestD = this.radiusM;
    for (let dx = -nx; dx <= nx; dx++) {
      for (let dy = -1; dy <= 1; dy++) {
        for (const id of this.cells.get(this.cellKey(fleetId, objectClass, cx + dx, cy + dy)) ?? []) {
          if (exclude.has(id)) continue;
          const e = this.entries.get(id)!.e;
          const d = distanceM(latitude, longitude, e.latitude, e.longitude);
          if (d <= bestD) {
            bestD = d;
            best = id;
          }
        }
      }
    }
    return best;
  }

  // Cells in degrees, one radius tall; their width in metres shrinks with cos(latitude) (see nearest).
  private cellOf(latitude: number, longitude: number): [number, number] {
    const deg = this.radiusM / M_PER_DEG;
    return [Math.floor(longitude / deg), Math.floor(latitude / deg)];
  }

  private cellKey(fleetId: string, objectClass: string, x: number, y: number): string {
    return `${fleetId}|${objectClass}|${x}|${y}`;
  }
}
