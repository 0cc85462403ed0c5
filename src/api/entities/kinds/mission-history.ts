/**
 * Kind `mission_history`: finished mission runs (completed, failed, cancelled, aborted), newest first
 * by start time; filters robot_id, mission_id, outcome and a start-time range. Active work is read
 * with get-runtime-status or GET /v1/mission-runs. Needs `history:read`.
 */
import { Type, type Static } from '@sinclair/typebox';
import { FINISHED_STATES, runsOf } from '../../../missions/runs/runs.js';
import type { RunRecord } from '../../../missions/runs/records.js';
import { Nullable, Uuid } from '../../schemas/common.js';
import { named } from '../../schemas/named.js';
import { defineKind } from '../kind.js';
import { AGENT_LIST_LIMIT, KindTag, RobotIdFilter } from './common.js';

const OUTCOMES = ['completed', 'failed', 'cancelled', 'aborted'] as const;
type Outcome = (typeof OUTCOMES)[number];
const OutcomeSchema = Type.Unsafe<Outcome>({ type: 'string', enum: [...OUTCOMES] });

export const MissionHistoryItem = named('MissionHistoryEntityItem', Type.Object(
  {
    kind: KindTag('mission_history'),
    run_id: Uuid,
    mission_id: Uuid,
    schedule_id: Nullable(Uuid),
    robot_id: Uuid,
    name: Type.String({ description: 'The template\'s name when the run started.' }),
    outcome: OutcomeSchema,
    mission_progress_pct: Type.Number({ description: 'Progress when it ended.' }),
    detail: Nullable(Type.String({ description: 'The robot\'s failure detail, or why a cancel or abort was requested.' })),
    started_at_ms: Type.Integer(),
    ended_at_ms: Nullable(Type.Integer()),
    correlation_id: Uuid,
  },
  { additionalProperties: false },
));
type MissionHistoryItem = Static<typeof MissionHistoryItem>;

const TimeFilter = (what: string) => Type.Integer({ minimum: 0, maximum: 253_402_300_799_999, description: `Only runs started ${what} (Unix ms).` });

export const missionHistoryKind = defineKind<RunRecord, MissionHistoryItem>({
  name: 'mission_history',
  permission: 'history:read',
  describe: 'finished mission runs only (completed, failed, cancelled, aborted), newest first by start time, kept 90 days; filters robot_id, mission_id, outcome, started_since_ms, started_before_ms',
  filters: {
    robot_id: RobotIdFilter,
    mission_id: Uuid,
    outcome: Type.Unsafe<Outcome>({ type: 'string', enum: [...OUTCOMES], description: 'Only runs that ended this way.' }),
    started_since_ms: TimeFilter('at or after this time'),
    started_before_ms: TimeFilter('before this time'),
  },
  limit: AGENT_LIST_LIMIT,
  item: MissionHistoryItem,
  source(deps, fleet, f) {
    const q = f as { robot_id?: string; mission_id?: string; outcome?: Outcome; started_since_ms?: number; started_before_ms?: number };
    return runsOf(deps.store, {
      fleetId: fleet.fleetId,
      sinceMs: q.started_since_ms ?? 0,
      ...(q.started_before_ms !== undefined ? { untilMs: q.started_before_ms } : {}),
      ...(q.robot_id !== undefined ? { robotId: q.robot_id } : {}),
      where: (r) => FINISHED_STATES.has(r.state) && (q.outcome === undefined || r.state === q.outcome) && (q.mission_id === undefined || r.missionId === q.mission_id),
    });
  },
  view: (_deps, r) => ({
    kind: 'mission_history',
    run_id: r.runId,
    mission_id: r.missionId,
    schedule_id: r.scheduleId,
    robot_id: r.robotId,
    name: r.name,
    outcome: r.state as Outcome,
    mission_progress_pct: r.progressPct,
    detail: r.detail,
    started_at_ms: r.startedAtMs,
    ended_at_ms: r.endedAtMs,
    correlation_id: r.correlationId,
  }),
});
