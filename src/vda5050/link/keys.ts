/** LMDB key shapes of master control (the `vda5050` plugin's claim in `meta`). */

/** Prefix of the stop marks in `meta` (stop-marks.ts). */
export const STOP_MARK_PREFIX = 'vdaStopMark';

/** `vdaStopMark/<robotId>` in `meta`: the highest seq of a stop master control published to the robot. */
export function stopMarkKey(robotId: string): string {
  return `${STOP_MARK_PREFIX}/${robotId}`;
}
