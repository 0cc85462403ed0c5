/** The alert thresholds (docs/alerts.md, Thresholds; README, Configuration). */
export interface AlertSettings {
  /** An active robot not connected for this long raises `robot_offline`. */
  offlineAfterMs: number;
  /** A robot whose battery reads below this percentage raises `battery_low`. */
  batteryLowPct: number;
  /** ... and it clears once the battery reads at least this (hysteresis: no flapping around one value). */
  batteryClearPct: number;
  /** A link conflict clears after this long without a refused connection (the robot link's own setting). */
  linkConflictClearMs: number;
}

export const DEFAULT_ALERT_SETTINGS: AlertSettings = {
  offlineAfterMs: 300_000,
  batteryLowPct: 15,
  batteryClearPct: 20,
  linkConflictClearMs: 60_000,
};
