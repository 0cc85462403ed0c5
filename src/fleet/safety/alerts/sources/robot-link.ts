/**
 * Alerts from the robot link, through the domain's `RobotLink` interface (src/protocol; src/gateway
 * hands in the gRPC registry): `robot_offline` and `link_conflict`.
 *
 * Offline: an active robot counts as offline from the moment its link ended, or, when it was not
 * connected when the gateway started (or was added later), from when the gateway first saw it
 * offline. A sweep every `sweepMs` (1 s) raises `robot_offline` for robots offline longer than the
 * threshold and resolves alerts of robots made inactive or removed; the robot list is re-read every
 * `rescanMs` (10 s, keys only) to notice robots added meanwhile. Coming online resolves the alert at
 * once. So an offline alert opens between the threshold and the threshold plus one second.
 *
 * Link conflict: raised by `onLinkConflict`, resolved by `onLinkConflictCleared`. The conflict state
 * lives in the link's memory, so after a restart an unresolved `link_conflict` alert is resolved once
 * the clear time has passed with no conflict on the robot (a conflict seen again meanwhile keeps it).
 */
import type { LinkConflictReport, RobotLink } from '../../../../protocol/robot-link.js';
import type { Store } from '../../../../store/lmdb.js';
import type { AlertService } from '../alert-service.js';
import type { AlertSettings } from '../settings.js';
import { allRobotIds, cachedRobot } from '../../../../store/identity-reads.js';

export interface RobotLinkAlertOptions {
  sweepMs?: number;
  rescanMs?: number;
  now?: () => number;
}

export class RobotLinkAlerts {
  private readonly offlineSince = new Map<string, number>();
  private readonly timers: NodeJS.Timeout[] = [];
  private unlisten: (() => void) | null = null;
  private readonly now: () => number;
  private lastRescanMs = 0;

  constructor(
    private readonly alerts: AlertService,
    private readonly store: Store,
    private readonly link: Pick<RobotLink, 'listen' | 'isOnline' | 'linkConflict'>,
    private readonly settings: AlertSettings,
    private readonly opts: RobotLinkAlertOptions = {},
  ) {
    this.now = opts.now ?? ((): number => Date.now());
  }

  /** Subscribes to the link, takes stock of who is offline now, and starts the sweep. */
  start(): void {
    this.unlisten = this.link.listen({
      onOnline: (robotId, info) => this.online(robotId, info.fleetId),
      onOffline: (robotId) => void this.offlineSince.set(robotId, this.now()),
      onLinkConflict: (robotId, report) => this.conflict(robotId, report),
      onLinkConflictCleared: (robotId, c) => void this.alerts.clear(c.fleetId, 'link_conflict', robotId, 'condition_cleared', c.clearedAtMs),
    });
    this.rescan();
    const sweep = setInterval(() => this.sweep(), this.opts.sweepMs ?? 1_000);
    sweep.unref();
    this.timers.push(sweep);
    // Conflicts open before a restart: the tracker starts afresh, so give a clone the clear time to show up again.
    for (const a of this.alerts.unresolvedOf('link_conflict')) {
      const t = setTimeout(() => {
        if (a.robotId !== null && this.link.linkConflict(a.robotId) === null) this.alerts.resolve(a, 'cleared_while_down');
      }, this.settings.linkConflictClearMs);
      t.unref();
      this.timers.push(t);
    }
  }

  stop(): void {
    this.unlisten?.();
    for (const t of this.timers) clearTimeout(t);
    this.timers.length = 0;
  }

  /** Runs one sweep now (tests; the interval calls it every second). */
  sweep(): void {
    const at = this.now();
    if (at - this.lastRescanMs >= (this.opts.rescanMs ?? 10_000)) this.rescan();
    for (const [robotId, since] of this.offlineSince) {
      if (at - since < this.settings.offlineAfterMs) continue;
      if (this.link.isOnline(robotId)) {
        this.offlineSince.delete(robotId);
        continue;
      }
      const robot = cachedRobot(this.store, robotId);
      if (robot === undefined) {
        this.offlineSince.delete(robotId);
        continue;
      }
      if (!robot.active || this.alerts.find(robot.fleetId, 'robot_offline', robotId) !== undefined) continue;
      this.alerts.raise({
        kind: 'robot_offline',
        fleetId: robot.fleetId,
        conditionKey: robotId,
        subject: { type: 'robot', id: robotId },
        robotId,
        severity: 'warning',
        message: `Robot ${robot.name} has been offline for more than ${Math.round(this.settings.offlineAfterMs / 1000)} s.`,
        details: { offlineSinceMs: since, thresholdMs: this.settings.offlineAfterMs },
        atMs: at,
      });
    }
    for (const a of this.alerts.unresolvedOf('robot_offline')) {
      const robot = a.robotId === null ? undefined : cachedRobot(this.store, a.robotId);
      if (robot === undefined) this.alerts.resolve(a, 'subject_removed', at);
      else if (!robot.active) this.alerts.resolve(a, 'robot_inactive', at);
    }
  }

  private online(robotId: string, fleetId: string): void {
    this.offlineSince.delete(robotId);
    this.alerts.clear(fleetId, 'robot_offline', robotId);
  }

  private rescan(): void {
    const at = this.now();
    this.lastRescanMs = at;
    for (const robotId of allRobotIds(this.store)) {
      if (!this.offlineSince.has(robotId) && !this.link.isOnline(robotId)) this.offlineSince.set(robotId, at);
    }
  }

  private conflict(robotId: string, r: LinkConflictReport): void {
    this.alerts.raise({
      kind: 'link_conflict',
      fleetId: r.fleetId,
      conditionKey: robotId,
      subject: { type: 'robot', id: robotId },
      robotId,
      severity: 'critical',
      message: 'Two processes use this robot\'s credentials (cloned token?): new connections are refused; commands may have reached either machine.',
      details: { rule: r.rule, holder: { ...r.holder }, refused: { ...r.refused }, suspectSinceMs: r.suspectSinceMs, clearAfterMs: r.clearAfterMs },
      atMs: r.sinceMs,
    });
  }
}
