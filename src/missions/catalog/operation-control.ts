/**
 * `control-operation` actions (spec: Agent API operation control; States and transitions, Operation).
 *
 * States: `stopped` (not running; the state a new operation starts in), `running`, `paused`.
 *   start           stopped|paused -> running. Assignment resumes; from paused the runs in flight
 *                   are resumed (RunEffects.resumeRuns). Already running: no change.
 *   pause           running -> paused. New assignment stops (the runtime adopts the state before the
 *                   runs are touched), then the runs in flight are paused. Not running: no change.
 *   abort_missions  paused only (409 otherwise). Aborts the runs in flight; stays paused.
 *   reset           paused|stopped only (409 while running: pause first, as for abort). Aborts the
 *                   runs in flight, clears the holders of every feature the operation's templates use,
 *                   bumps the operation epoch; -> stopped.
 *   restart         paused|stopped only. As reset, then -> running (assignment starts afresh).
 *   reset_step      one step (template, `mission_id`) or, without it, every step: its feature's
 *                   holders are cleared and its decomposition epoch bumped, so the step's area is
 *                   worked from the start on its next run. State unchanged; runs untouched.
 *   reset_decomposers  bumps the decomposition epoch of every feature the templates use (holders
 *                   kept). State unchanged.
 *   enable_mission / disable_mission  the template's enabled state.
 *   assign_robot / unassign_robot     roster rules (roster.ts).
 */
import type { Logger } from 'pino';
import type { Permission } from '../../auth/permissions.js';
import { apiError } from '../../errors/catalog.js';
import type { EventLog } from '../../events/index.js';
import type { Store } from '../../store/lmdb.js';
import { changeFeature } from './features.js';
import { changeOperation, requireOperation } from './operation.js';
import type { OperationRecord, TemplateRecord } from './records.js';
import type { AdvertisedCapabilities } from './robot-capabilities.js';
import { assignRobot, unassignRobot } from './roster.js';
import type { OperationRuntime, RunEffectFailure, RunEffects, SyncResult } from './runtime.js';
import { listTemplates, requireTemplate, setTemplateEnabled } from './templates.js';

export const OPERATION_ACTIONS = [
  'start',
  'pause',
  'reset',
  'restart',
  'reset_step',
  'abort_missions',
  'enable_mission',
  'disable_mission',
  'assign_robot',
  'unassign_robot',
  'reset_decomposers',
] as const;
export type OperationAction = (typeof OPERATION_ACTIONS)[number];

/**
 * Permission per action. The spec names operations:control for start and pause only; reset, restart,
 * reset_step and abort_missions control the operation too, so they need the same.
 */
export const ACTION_PERMISSION: Record<OperationAction, Permission> = {
  start: 'operations:control',
  pause: 'operations:control',
  reset: 'operations:control',
  restart: 'operations:control',
  reset_step: 'operations:control',
  abort_missions: 'operations:control',
  enable_mission: 'missions:write',
  disable_mission: 'missions:write',
  assign_robot: 'missions:write',
  unassign_robot: 'missions:write',
  reset_decomposers: 'features:write',
};

export interface ControlInput {
  action: OperationAction;
  operationId?: string;
  missionId?: string;
  robotId?: string;
}

export interface RunsOutcome {
  effect: 'pause' | 'resume' | 'abort';
  /** False until the run tracker has attached its hooks (the state still changes). */
  attached: boolean;
  applied: boolean;
  detail?: string;
  /** Active runs the effect addressed (when attached and it ran). */
  count?: number;
  /** Runs whose pause/resume/abort could not be submitted (`applied` is false when any). */
  failures?: RunEffectFailure[];
}

export interface ControlOutcome {
  operation: OperationRecord;
  /** False when the action found nothing to change (e.g. start on a running operation). */
  changed: boolean;
  template?: TemplateRecord;
  /** Features whose holders or decomposition were reset. */
  features?: string[];
  runtimeSync: SyncResult;
  runs?: RunsOutcome;
}

export interface ControlDeps {
  store: Store;
  events: EventLog;
  runtime: OperationRuntime;
  /** What robots advertised in Hello: `assign_robot` counts it with the registered capabilities. */
  advertised: AdvertisedCapabilities;
  log: Logger;
}

function need<T>(value: T | undefined, action: string, field: string): T {
  if (value === undefined) throw apiError('missing_field', { action, field });
  return value;
}

/**
 * Runs one action on the fleet's operation.
 * @throws ApiError 404 `operation_not_found` (no template yet), 409 `operation_mismatch` /
 *   `operation_state_conflict`, and the template, roster and feature errors of each action
 */
export async function controlOperation(deps: ControlDeps, fleetId: string, input: ControlInput, nowMs: number): Promise<ControlOutcome> {
  const { store, events, runtime } = deps;
  const current = requireOperation(store, fleetId);
  if (input.operationId !== undefined && input.operationId !== current.operationId) throw apiError('operation_mismatch', { operationId: input.operationId });
  const { action } = input;

  const transition = async (
    kind: string,
    allowed: readonly OperationRecord['state'][] | null,
    next: (op: OperationRecord) => OperationRecord | null,
    neededText = '',
  ): Promise<{ before: OperationRecord; after: OperationRecord }> =>
    changeOperation(store, events, fleetId, (op) => (allowed !== null && !allowed.includes(op.state) ? apiError('operation_state_conflict', { action, needed: neededText, state: op.state }) : next(op)), nowMs, kind);

  const finish = async (operation: OperationRecord, changed: boolean, extra: Partial<ControlOutcome> = {}, effect?: RunsOutcome['effect']): Promise<ControlOutcome> => {
    // Adoption first: once paused is live, no new run is assigned while the runs are being paused.
    const runtimeSync = await runtime.awaitSync(fleetId);
    const out: ControlOutcome = { operation, changed, runtimeSync, ...extra };
    if (effect !== undefined) out.runs = await runEffect(deps, runtime.runEffects(), effect, fleetId);
    return out;
  };

  switch (action) {
    case 'start': {
      const { before, after } = await transition('operation.started', null, (op) => (op.state === 'running' ? null : { ...op, state: 'running' }));
      return finish(after, before !== after, {}, before.state === 'paused' ? 'resume' : undefined);
    }
    case 'pause': {
      const { before, after } = await transition('operation.paused', null, (op) => (op.state === 'running' ? { ...op, state: 'paused' } : null));
      return finish(after, before !== after, {}, before !== after ? 'pause' : undefined);
    }
    case 'abort_missions': {
      const { after } = await transition('operation.missions_aborted', ['paused'], (op) => ({ ...op }), 'paused');
      return finish(after, true, {}, 'abort');
    }
    case 'reset':
    case 'restart': {
      const state = action === 'reset' ? 'stopped' : 'running';
      const { after } = await transition(action === 'reset' ? 'operation.reset' : 'operation.restarted', ['paused', 'stopped'], (op) => ({ ...op, state, epoch: op.epoch + 1 }), 'paused or stopped');
      const features = await resetFeatures(store, events, fleetId, listTemplates(store, fleetId), nowMs, 'holders');
      return finish(after, true, { features }, 'abort');
    }
    case 'reset_step': {
      const templates = input.missionId !== undefined ? [requireTemplate(store, fleetId, input.missionId)] : listTemplates(store, fleetId);
      const features = await resetFeatures(store, events, fleetId, templates, nowMs, 'holders');
      const { after } = await transition('operation.step_reset', null, (op) => ({ ...op }));
      return finish(after, true, { features });
    }
    case 'reset_decomposers': {
      const features = await resetFeatures(store, events, fleetId, listTemplates(store, fleetId), nowMs, 'decomposition');
      const { after } = await transition('operation.decomposers_reset', null, (op) => ({ ...op }));
      return finish(after, true, { features });
    }
    case 'enable_mission':
    case 'disable_mission': {
      const missionId = need(input.missionId, action, 'mission_id');
      const before = requireTemplate(store, fleetId, missionId);
      const template = await setTemplateEnabled(store, events, fleetId, missionId, action === 'enable_mission', nowMs);
      return finish(current, template.version !== before.version, { template });
    }
    case 'assign_robot':
    case 'unassign_robot': {
      const robotId = need(input.robotId, action, 'robot_id');
      const missionId = need(input.missionId, action, 'mission_id');
      const { template, changed } = action === 'assign_robot'
        ? await assignRobot(store, events, deps.advertised, fleetId, missionId, robotId, nowMs)
        : await unassignRobot(store, events, fleetId, missionId, robotId, nowMs);
      return finish(current, changed, { template });
    }
  }
}

/**
 * `holders`: clears holders and bumps the decomposition epoch (a step starts over);
 * `decomposition`: bumps the epoch only. Each feature once, however many templates share it.
 */
async function resetFeatures(store: Store, events: EventLog, fleetId: string, templates: readonly TemplateRecord[], nowMs: number, what: 'holders' | 'decomposition'): Promise<string[]> {
  const ids = [...new Set(templates.map((t) => t.featureId).filter((f): f is string => f !== null))].sort();
  const done: string[] = [];
  for (const id of ids) {
    if (store.features.get(id)?.fleetId !== fleetId) continue;
    await changeFeature(
      store,
      events,
      fleetId,
      id,
      (f) => ({ ...f, decompositionEpoch: f.decompositionEpoch + 1, ...(what === 'holders' ? { holders: [] } : {}) }),
      { kind: what === 'holders' ? 'feature.step_reset' : 'feature.decomposition_reset', data: (f) => ({ decompositionEpoch: f.decompositionEpoch }) },
      nowMs,
    );
    done.push(id);
  }
  return done;
}

async function runEffect(deps: ControlDeps, effects: RunEffects | null, effect: RunsOutcome['effect'], fleetId: string): Promise<RunsOutcome> {
  if (effects === null) {
    deps.log.warn({ fleetId, effect }, `control-operation ${effect} on fleet ${fleetId}: no run tracker is attached; the operation state changed, no run was touched`);
    return { effect, attached: false, applied: false, detail: 'no run tracker is attached' };
  }
  try {
    const report = effect === 'pause' ? await effects.pauseRuns(fleetId) : effect === 'resume' ? await effects.resumeRuns(fleetId) : await effects.abortRuns(fleetId);
    if (report.failures.length === 0) return { effect, attached: true, applied: true, count: report.count };
    const detail = `${report.failures.length} of ${report.count} runs failed: ${report.failures.map((f) => `${f.runId}: ${f.error}`).join('; ')}`;
    deps.log.warn({ fleetId, effect }, `control-operation ${effect} on fleet ${fleetId}: ${detail}`);
    return { effect, attached: true, applied: false, detail, count: report.count, failures: report.failures };
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    deps.log.error({ err, fleetId, effect }, `control-operation ${effect} on fleet ${fleetId}: run effect failed: ${detail}`);
    return { effect, attached: true, applied: false, detail };
  }
}
