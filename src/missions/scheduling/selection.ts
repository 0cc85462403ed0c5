/**
 * Robot selection for a due mission fire: which robots could take it, which one does, and why the
 * others cannot. Pure (no I/O), so the same function drives dispatch and `get-runtime-status`.
 *
 * A robot is eligible when: it is an active member of the fleet; it advertises every capability the
 * template requires; it is on the template's roster (an empty roster admits every fleet robot); it is
 * among the schedule's `robot_ids` (empty: no restriction); it is online; it is not running a mission
 * (nor reserved by another fire in the same pass); and its battery meets the template's
 * `prerequisites.minBatteryPct` when one is set and the robot reported a battery level.
 * Nothing is dispatched at all while the template is missing or disabled, its feature is locked
 * (`feature_locked`, checked by the dispatcher's gate), or the fleet operation is not running.
 *
 * Choice among eligible robots: the one assigned least recently (spreads wear), then the lowest id.
 */
import type { TemplateRecord } from '../catalog/records.js';

/** What selection needs to know about one robot of the fleet. */
export interface RobotView {
  robotId: string;
  name: string;
  active: boolean;
  /** Registered plus advertised capabilities. */
  capabilities: readonly string[];
  online: boolean;
  /** Run the robot is executing (or starting), or null. */
  busyRunId: string | null;
  batteryPct: number | null;
}

export interface SelectionInput {
  template: TemplateRecord | undefined;
  /** Fleet-level gate (operation running and template dispatchable), with the reason when closed. */
  gate: { open: true } | { open: false; reason: string };
  robots: readonly RobotView[];
  /** The schedule's `robot_ids`; empty: any robot the roster allows. */
  robotIds: readonly string[];
  /** Robots already promised to another fire in this pass. */
  reserved: ReadonlySet<string>;
  lastAssignedAt: ReadonlyMap<string, number>;
}

export interface Candidate {
  robotId: string;
  name: string;
  eligible: boolean;
  /** Why the robot cannot take the fire now (empty when eligible). */
  reasons: string[];
}

export interface Selection {
  robotId: string | null;
  candidates: Candidate[];
  /** Why nothing was chosen (empty when a robot was). */
  blocking: string[];
}

/** Picks a robot for a fire, or explains why none can take it. */
export function selectRobot(input: SelectionInput): Selection {
  const { template } = input;
  if (!template) return { robotId: null, candidates: [], blocking: ['template_missing'] };
  const restrict = input.robotIds.length > 0 ? new Set(input.robotIds) : null;
  const roster = template.roster.length > 0 ? new Set(template.roster) : null;
  const pool = restrict ? input.robots.filter((r) => restrict.has(r.robotId)) : input.robots;
  const candidates: Candidate[] = pool.map((r) => ({ robotId: r.robotId, name: r.name, eligible: false, reasons: robotReasons(r, template, roster, input) }));
  for (const c of candidates) c.eligible = c.reasons.length === 0;
  if (restrict) {
    // A listed robot that is no longer in the fleet (transferred) still shows up, as not a member.
    const known = new Set(pool.map((r) => r.robotId));
    for (const id of input.robotIds) if (!known.has(id)) candidates.push({ robotId: id, name: '', eligible: false, reasons: ['not_fleet_member'] });
  }
  const blocking: string[] = [];
  if (!input.gate.open) blocking.push(input.gate.reason);
  const eligible = candidates.filter((c) => c.eligible);
  if (eligible.length === 0) {
    if (candidates.length === 0) blocking.push('no_robots');
    else blocking.push(...summarize(candidates));
  }
  if (blocking.length > 0) return { robotId: null, candidates, blocking };
  eligible.sort((a, b) => (input.lastAssignedAt.get(a.robotId) ?? 0) - (input.lastAssignedAt.get(b.robotId) ?? 0) || (a.robotId < b.robotId ? -1 : 1));
  return { robotId: eligible[0]!.robotId, candidates, blocking };
}

function robotReasons(r: RobotView, t: TemplateRecord, roster: Set<string> | null, input: SelectionInput): string[] {
  const out: string[] = [];
  if (!r.active) out.push('not_active');
  if (roster && !roster.has(r.robotId)) out.push('not_on_roster');
  const have = new Set(r.capabilities);
  for (const c of t.capabilities) if (!have.has(c)) out.push(`missing_capability:${c}`);
  if (!r.online) out.push('offline');
  if (r.busyRunId !== null) out.push(`busy:${r.busyRunId}`);
  else if (input.reserved.has(r.robotId)) out.push('reserved');
  const min = t.prerequisites.minBatteryPct;
  if (min !== undefined && r.batteryPct !== null && r.batteryPct < min) out.push('battery_low');
  return out;
}

/** One line per distinct reason kind, e.g. `offline (2 robots)`, in a stable order. */
function summarize(candidates: Candidate[]): string[] {
  const counts = new Map<string, number>();
  for (const c of candidates) {
    for (const reason of c.reasons) {
      const kind = reason.startsWith('busy:') ? 'busy' : reason;
      counts.set(kind, (counts.get(kind) ?? 0) + 1);
    }
  }
  return [...counts.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([k, n]) => `${k} (${n} robot${n === 1 ? '' : 's'})`);
}
