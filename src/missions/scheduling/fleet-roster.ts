/**
 * A fleet's robots as robot selection sees them (selection.ts): registered fields from the registry, cached
 * per fleet for {@link ROSTER_TTL_MS} because decoding the records dominated dispatch passes under
 * load; online state, advertised capabilities and busy runs are always current; the battery level is
 * read only when a template asks for it.
 *
 * Bound: one entry per fleet with open fires (replaced, never accumulated per pass).
 */
import type { RobotLink } from '../../protocol/robot-link.js';
import type { Clock } from '../clock.js';
import type { IdentityReads } from '../../store/identity-reads.js';
import type { LatestSnapshots } from '../../telemetry/snapshots/index.js';
import type { RunTracker } from '../runs/run-tracker.js';
import type { RobotView } from './selection.js';

/** How long a fleet's registered robot fields are reused between passes. */
export const ROSTER_TTL_MS = 1000;

interface RegisteredRobot {
  robotId: string;
  name: string;
  active: boolean;
  capabilities: string[];
}

export class FleetRoster {
  private readonly cache = new Map<string, { atMs: number; robots: RegisteredRobot[] }>();

  constructor(
    private readonly identity: Pick<IdentityReads, 'fleetRobotIds' | 'robot'>,
    private readonly snapshots: Pick<LatestSnapshots, 'latest'>,
    private readonly clock: Clock,
    private readonly tracker: Pick<RunTracker, 'advertisedCapabilities' | 'activeRunOf'>,
    private readonly link: Pick<RobotLink, 'isOnline'>,
  ) {}

  /** The fleet's robots, with live state. */
  views(fleetId: string): RobotView[] {
    const now = this.clock.now();
    let cached = this.cache.get(fleetId);
    if (!cached || now - cached.atMs >= ROSTER_TTL_MS || now < cached.atMs) {
      const robots: RegisteredRobot[] = [];
      for (const robotId of this.identity.fleetRobotIds(fleetId)) {
        const r = this.identity.robot(robotId);
        if (r && r.fleetId === fleetId) robots.push({ robotId, name: r.name, active: r.active, capabilities: r.capabilities });
      }
      cached = { atMs: now, robots };
      this.cache.set(fleetId, cached);
    }
    const snapshots = this.snapshots;
    return cached.robots.map((r) => {
      const advertised = this.tracker.advertisedCapabilities(r.robotId);
      return {
        robotId: r.robotId,
        name: r.name,
        active: r.active,
        capabilities: advertised.length === 0 ? r.capabilities : [...new Set([...r.capabilities, ...advertised])],
        online: this.link.isOnline(r.robotId),
        busyRunId: this.tracker.activeRunOf(r.robotId)?.runId ?? null,
        get batteryPct(): number | null {
          return snapshots.latest(r.robotId)?.battery.percent ?? null;
        },
      };
    });
  }
}
