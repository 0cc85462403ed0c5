/**
 * Who may read mission history (issue 10 part 9). A finished run (completed, failed, cancelled,
 * aborted) is mission history: its record is returned only to a caller holding `history:read`,
 * wherever it is read (`GET /v1/mission-runs`, the `last_run` of a schedule's runtime status, the
 * Agent API's `mission_history` kind). Active runs are live work and stay readable with the route's
 * own permission (spec: "Recent mission-run reads use fleet:read"; "active work is read with
 * get-runtime-status or GET /v1/mission-runs"). docs/missions.md, "Mission history and history:read".
 */
import type { AuthContext } from '../../auth/context.js';
import { isLivePermission } from '../../auth/permissions.js';
import { sortableNumber } from '../../store/keys.js';
import type { Keyset } from '../../store/keyset.js';
import type { RunRecord } from './records.js';
import type { RunQuery } from './runs.js';
import { isFinished } from './runs.js';

/** The permission that gates finished runs. */
export const HISTORY_PERMISSION = 'history:read';

/** True when the caller may read finished runs. */
export function canReadHistory(auth: Pick<AuthContext, 'permissions'>): boolean {
  return isLivePermission(HISTORY_PERMISSION) && auth.permissions.includes(HISTORY_PERMISSION);
}

/** The run when the caller may see it: an active run always, a finished one only with `history:read`. */
export function runVisibleTo<R extends Pick<RunRecord, 'state'>>(auth: Pick<AuthContext, 'permissions'>, run: R | undefined): R | undefined {
  if (run === undefined) return undefined;
  return isFinished(run.state) && !canReadHistory(auth) ? undefined : run;
}

/**
 * The unfinished runs of `active` matching `q`, newest first (start time, then run id), as a keyset.
 * What a caller without `history:read` lists: read from the tracker's in-memory active runs (at most
 * one per robot), so a long history is never scanned to find them.
 */
export function activeRunsKeyset(active: readonly RunRecord[], q: RunQuery): Keyset<RunRecord> {
  const rows = active
    .filter((r) => r.fleetId === q.fleetId && !isFinished(r.state) && r.startedAtMs >= q.sinceMs)
    .filter((r) => (q.scheduleId === undefined || r.scheduleId === q.scheduleId) && (q.robotId === undefined || r.robotId === q.robotId))
    .map((r) => ({ pos: `${sortableNumber(r.startedAtMs)}/${r.runId}`, r }))
    .sort((a, b) => (a.pos < b.pos ? 1 : a.pos > b.pos ? -1 : 0));
  return {
    page(after, limit) {
      const from = after === null ? rows : rows.filter((x) => x.pos < after);
      const items = from.slice(0, limit);
      return { items: items.map((x) => x.r), last: items.length > 0 ? items[items.length - 1]!.pos : null, more: from.length > limit };
    },
  };
}
