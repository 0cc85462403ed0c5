/**
 * Which Foxglove channels a decode task writes: the Foxglove frames cost several times the decode
 * (docs/foxglove.md), so a task writes them only for the robots a Foxglove socket subscribes to.
 */
import type { FoxgloveSink } from '../live/index.js';

/** Per robot index, the Foxglove channel kinds subscribed to; null when none is (the common case). */
export function foxgloveMask(fox: FoxgloveSink | undefined, robotIds: string[]): Uint8Array | null {
  if (!fox?.anyWatched()) return null;
  const mask = new Uint8Array(robotIds.length);
  let any = false;
  for (let i = 0; i < robotIds.length; i++) {
    const kinds = fox.watchedKinds(robotIds[i]!);
    if (kinds !== 0) {
      mask[i] = kinds;
      any = true;
    }
  }
  return any ? mask : null;
}
