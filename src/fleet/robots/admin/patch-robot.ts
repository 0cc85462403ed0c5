/**
 * Robot administration (docs/robot-admin.md): a robot's mutable metadata (name,
 * labels, notes, active flag) and its transfer to another fleet of the same organization.
 *
 * A transfer is one LMDB transaction (record, fleet index, the old fleet's rosters, events in both
 * fleets' timelines) and is safe for commands:
 *  - refused (409 `robot_not_idle`) while the robot runs a mission or has a command it has not
 *    acknowledged (deferred or sent and unacknowledged), checked again inside the transaction;
 *  - from just before the transaction until the robot's link session is closed, the command service
 *    refuses every new command for the robot (409 `robot_transferring`), so no command is accepted for
 *    the old fleet once the check passed, and none is lost (the caller gets a definite answer);
 *  - an online robot's link session authenticated into the old fleet: it is closed once the transfer
 *    committed, and the agent reconnects into the new fleet (telemetry, detections and commands
 *    then carry the new fleet). Commands addressed to the old fleet afterwards are 404: the command
 *    service checks the robot's fleet of record on every submission, also for schedules and fires.
 */
import type { Logger } from 'pino';
import type { AuthContext } from '../../../auth/context.js';
import type { CommandService } from '../../../commands/service.js';
import { ApiError, apiError } from '../../../errors/catalog.js';
import type { EventLog } from '../../../events/index.js';
import type { CatalogWrites } from '../../../missions/catalog/catalog-writes.js';
import type { RunTracker } from '../../../missions/runs/run-tracker.js';
import type { RobotLink } from '../../../protocol/robot-link.js';
import { vda5050HolderOther } from '../../../store/identity.js';
import type { RegistryWrites } from '../../../store/registry-writes.js';
import type { Store } from '../../../store/lmdb.js';
import type { FleetRecord, RobotRecord } from '../../../store/records.js';
import { robotRecord } from '../../../store/identity-reads.js';

/** What a PATCH may change; omitted fields are kept. `labels` replaces the whole map; `notes` null clears. */
export interface RobotPatch {
  name?: string;
  labels?: Record<string, string>;
  notes?: string | null;
  active?: boolean;
  /** Move the robot to this fleet (of the same organization, usable by the caller). */
  fleet?: Readonly<FleetRecord>;
  /** Bind the robot to this VDA 5050 identity (checked topic-safe by the schema); null unbinds. */
  vda5050?: { manufacturer: string; serialNumber: string } | null;
}

export interface RobotAdminDeps {
  /** For reads of the registry's records and the transaction every write of a change shares. */
  store: Store;
  /** The robot record and its fleet index, written by the registry. */
  registry: RegistryWrites;
  /** The old fleet's rosters, written by the catalog. */
  catalog: Pick<CatalogWrites, 'leaveRostersSync'>;
  events: EventLog;
  commands: Pick<CommandService, 'hold' | 'undeliveredCount'>;
  runs: Pick<RunTracker, 'activeRunOf'>;
  link: Pick<RobotLink, 'closeSession'>;
  /** Called with the old fleet once rosters changed (the live operation re-reads its templates). */
  rostersChanged?: (fleetId: string) => void;
  log?: Pick<Logger, 'info'>;
}

export interface PatchOutcome {
  robot: RobotRecord;
  /** Set when the robot moved: the fleet it left. */
  movedFrom: string | null;
  /** Templates of the old fleet whose roster the robot left. */
  rostersLeft: string[];
}

/** Why the robot is not idle, or null when it is (a transfer needs idle). */
function busyReason(deps: RobotAdminDeps, robotId: string): string | null {
  const run = deps.runs.activeRunOf(robotId);
  if (run) return `running mission run ${run.runId}`;
  const n = deps.commands.undeliveredCount(robotId);
  if (n > 0) return `${n} command(s) not yet acknowledged by the robot`;
  return null;
}

/**
 * Applies a PATCH to a robot the caller may use (checked by the caller).
 * @throws ApiError 409 `robot_not_idle`, `robot_rostered_alone`, `robot_identity_taken` (another
 *   robot holds the identity); 404 `robot_not_found` (moved or removed meanwhile)
 */
export async function patchRobot(deps: RobotAdminDeps, auth: AuthContext, robot: RobotRecord, patch: RobotPatch, nowMs: number): Promise<PatchOutcome> {
  const { store, events } = deps;
  const from = robot.fleetId;
  const to = patch.fleet !== undefined && patch.fleet.fleetId !== from ? patch.fleet.fleetId : null;
  const actor = { actorType: auth.actorType, apiKeyId: auth.apiKeyId, ...(auth.user ? { userId: auth.user.userId } : {}) };
  const fields = (['name', 'labels', 'notes', 'active', 'vda5050'] as const).filter((k) => patch[k] !== undefined);
  if (to !== null) {
    const busy = busyReason(deps, robot.robotId);
    if (busy !== null) throw apiError('robot_not_idle', { robotId: robot.robotId, reason: busy });
  }
  const release = to !== null ? deps.commands.hold(robot.robotId) : () => {};
  try {
    const out = await store.root.transaction((): PatchOutcome | ApiError => {
      const cur = robotRecord(store, robot.robotId);
      if (!cur || cur.fleetId !== from) return apiError('robot_not_found', { robotId: robot.robotId });
      let rostersLeft: string[] = [];
      if (to !== null) {
        // Again under the hold: a command or run that began since the first check refuses the move.
        const busy = busyReason(deps, robot.robotId);
        if (busy !== null) return apiError('robot_not_idle', { robotId: robot.robotId, reason: busy });
        const left = deps.catalog.leaveRostersSync(events, from, robot.robotId, nowMs);
        if (left instanceof ApiError) return left;
        rostersLeft = left;
      }
      if (patch.vda5050 !== undefined && patch.vda5050 !== null) {
        // Inside the write: two robots asking for one identity at once cannot both get it.
        const holder = vda5050HolderOther(store, robot.robotId, patch.vda5050);
        if (holder !== undefined) return apiError('robot_identity_taken', { ...patch.vda5050, holderRobotId: holder });
      }
      const next: RobotRecord = {
        ...cur,
        ...(patch.name !== undefined ? { name: patch.name } : {}),
        ...(patch.labels !== undefined ? { labels: patch.labels } : {}),
        ...(patch.notes !== undefined ? { notes: patch.notes } : {}),
        ...(patch.active !== undefined ? { active: patch.active } : {}),
        ...(to !== null ? { fleetId: to } : {}),
        updatedAtMs: nowMs,
      };
      if (patch.vda5050 === null) delete next.vda5050;
      else if (patch.vda5050 !== undefined) next.vda5050 = { manufacturer: patch.vda5050.manufacturer, serialNumber: patch.vda5050.serialNumber };
      deps.registry.replaceRobotSync(cur, next);
      const subject = { type: 'robot' as const, id: robot.robotId };
      if (fields.length > 0) {
        events.append({ fleetId: from, correlationId: robot.robotId, atMs: nowMs, kind: 'robot.updated', subject, data: { fields, ...actor } });
      }
      if (to !== null) {
        deps.registry.moveRobotIndexSync(robot.robotId, from, to);
        const data = { fromFleetId: from, toFleetId: to, rostersLeft, ...actor };
        // The robot's timeline in both fleets (correlation id = robot id).
        events.append({ fleetId: from, correlationId: robot.robotId, atMs: nowMs, kind: 'robot.transferred_out', subject, data });
        events.append({ fleetId: to, correlationId: robot.robotId, atMs: nowMs, kind: 'robot.transferred_in', subject, data });
      }
      return { robot: next, movedFrom: to !== null ? from : null, rostersLeft };
    });
    if (out instanceof ApiError) throw out;
    // Committed: the robot's session still speaks for the old fleet; end it so the agent reconnects
    // into the new one. The hold lasts until here, so nothing was accepted for either fleet between.
    if (out.movedFrom !== null) {
      const reconnecting = deps.link.closeSession(robot.robotId, `robot moved to fleet ${out.robot.fleetId}`);
      deps.log?.info({ robotId: robot.robotId, fromFleetId: from, toFleetId: out.robot.fleetId, rostersLeft: out.rostersLeft, ...actor, reconnecting }, `robot ${robot.robotId}: moved to fleet ${out.robot.fleetId}`);
    }
    if (out.rostersLeft.length > 0) deps.rostersChanged?.(from);
    return out;
  } finally {
    release();
  }
}
