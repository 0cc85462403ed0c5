/**
 * `control-mission`: pause, resume, cancel or abort one robot's run (spec: Mission run control).
 *
 *   pause           running/starting/paused run -> MissionControl PAUSE; offline robot: `deferred`
 *                   (kept, sent on reconnect, ahead of other queued commands)
 *   resume          paused/running run, robot connected -> RESUME; robot offline: 503
 *   cancel / abort  unfinished run -> records the request on the run and sends CANCEL / ABORT; the
 *                   robot's later report gives the outcome; offline: `deferred`
 *   any verb on a finished run: 409 (the spec's "resume of a cancelled or aborted run"; pausing or
 *   cancelling a finished run is refused the same way)
 * Without `run_id` the robot's active run of `mission_id` is addressed, or else its latest run of it
 * (so resuming a run that was already cancelled still answers 409, not 404).
 */
import type { Requester } from '../../commands/requester.js';
import type { CommandService, Submitted } from '../../commands/service.js';
import type { MissionControlVerb } from '../../commands/types.js';
import { apiError } from '../../errors/catalog.js';
import type { RobotLink } from '../../protocol/robot-link.js';
import type { Store } from '../../store/lmdb.js';
import type { RunRecord } from './records.js';
import type { RunTracker } from './run-tracker.js';
import { isFinished, latestRunOf } from './runs.js';

export interface ControlRequest {
  fleetId: string;
  orgId: string;
  robotId: string;
  missionId: string;
  runId?: string;
  verb: MissionControlVerb;
  requestedBy: Requester;
}

/**
 * Resolves the run and submits the control command.
 * @throws ApiError `run_not_found` (404), `run_finished` (409), `robot_offline` (503 on resume)
 */
export function controlRun(store: Store, tracker: RunTracker, commands: CommandService, link: Pick<RobotLink, 'isOnline'>, req: ControlRequest): { run: RunRecord; submitted: Submitted } {
  const run = resolveRun(store, tracker, req);
  if (isFinished(run.state)) throw apiError('run_finished', { runId: run.runId, state: run.state, action: req.verb });
  if (req.verb === 'resume' && !link.isOnline(req.robotId)) throw apiError('robot_offline', { robotId: req.robotId, action: 'resume' });
  const submitted = commands.submit({
    robotId: req.robotId,
    fleetId: req.fleetId,
    orgId: req.orgId,
    action: 'mission_control',
    args: { runId: run.runId, action: req.verb },
    requestedBy: req.requestedBy,
  });
  if (req.verb === 'cancel' || req.verb === 'abort') tracker.markCancelRequested(run.runId, req.verb);
  return { run, submitted };
}

function resolveRun(store: Store, tracker: RunTracker, req: ControlRequest): RunRecord {
  if (req.runId !== undefined) {
    const r = tracker.get(req.runId);
    if (!r || r.robotId !== req.robotId || r.missionId !== req.missionId || r.fleetId !== req.fleetId) {
      throw apiError('run_not_found', { what: `run ${req.runId} of mission ${req.missionId} on robot ${req.robotId}` });
    }
    return r;
  }
  const active = tracker.activeRunOf(req.robotId);
  if (active && active.missionId === req.missionId) return active;
  const latest = latestRunOf(store, req.robotId, req.missionId);
  if (!latest || latest.fleetId !== req.fleetId) throw apiError('run_not_found', { what: `a run of mission ${req.missionId} on robot ${req.robotId}` });
  return tracker.get(latest.runId) ?? latest;
}
