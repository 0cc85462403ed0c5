/**
 * The gateway-side safety rules a command must pass before it is stored or sent. A refused command
 * leaves no trace on the robot's stream.
 *
 * Rules, in order:
 * 1. An inactive robot accepts only commands that bring it to rest: `stop`, and `mission_control`
 *    `pause` / `cancel` / `abort` (409 `conflict`).
 * 2. A robot without an advertised policy accepts `stop`, `start`, `release`, `force_reset` and the
 *    mission commands; everything policy-bound (mode, actions, settings, go-to, config, onboard
 *    settings) is refused (422 `policy_rejected`).
 * 3. Policy-bound commands must lie inside the robot's advertised policy (422 `policy_rejected`);
 *    action arguments are checked against the robot's schema within bounds (policy-limits.ts).
 * Mission commands are not policy-bound: templates carry their own capability checks.
 */
import { apiError } from '../errors/catalog.js';
import { PENDING_POLICY, validateArguments, type CompiledPolicy, type SettingRule } from './policy.js';
import type { ActionAndArgs } from './types.js';

/** True when the point lies inside the ring (even-odd rule; lat/lon treated as plane coordinates). */
export function pointInRing(lat: number, lon: number, ring: readonly { lat: number; lon: number }[]): boolean {
  let inside = false;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const a = ring[i]!;
    const b = ring[j]!;
    if (a.lat > lat !== b.lat > lat && lon < ((b.lon - a.lon) * (lat - a.lat)) / (b.lat - a.lat) + a.lon) inside = !inside;
  }
  return inside;
}

function settingProblem(key: string, value: unknown, rule: SettingRule | undefined): string | null {
  if (!rule) return `setting ${key} is not advertised`;
  switch (rule.kind) {
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) return `setting ${key} must be a number`;
      if (rule.min !== null && value < rule.min) return `setting ${key} must be at least ${rule.min}`;
      if (rule.max !== null && value > rule.max) return `setting ${key} must be at most ${rule.max}`;
      return null;
    case 'boolean':
      return typeof value === 'boolean' ? null : `setting ${key} must be a boolean`;
    case 'string':
      if (typeof value !== 'string') return `setting ${key} must be a string`;
      return rule.allowed.length === 0 || rule.allowed.includes(value) ? null : `setting ${key} must be one of ${rule.allowed.join(', ')}`;
    case 'invalid':
      return `setting ${key} is advertised with an unknown kind`;
  }
}

/** Why the policy refuses a policy-bound command, or null when it accepts it. */
function policyProblem(p: CompiledPolicy, c: ActionAndArgs): string | null {
  switch (c.action) {
    case 'mode':
      return p.modes.has(c.args.mode) ? null : `mode ${c.args.mode} is not among the allowed modes (${[...p.modes].join(', ') || 'none'})`;
    case 'invoke_action': {
      const rule = p.actions.get(c.args.name);
      if (!rule) return `action ${c.args.name} is not advertised`;
      return validateArguments(c.args.name, rule, c.args.arguments);
    }
    case 'update_settings': {
      for (const [k, v] of Object.entries(c.args.values)) {
        const problem = settingProblem(k, v, p.settings.get(k));
        if (problem) return problem;
      }
      return null;
    }
    case 'go_to':
      if (!p.goToArea) return 'the robot accepts no go-to targets';
      return pointInRing(c.args.latitude, c.args.longitude, p.goToArea) ? null : 'the target lies outside the robot\'s go-to area';
    default:
      return null;
  }
}

const POLICY_BOUND = new Set(['mode', 'invoke_action', 'update_settings', 'go_to', 'config', 'onboard_settings']);

/** True for commands that bring a robot to rest (accepted even from inactive robots). */
function isRestCommand(c: ActionAndArgs): boolean {
  return c.action === 'stop' || (c.action === 'mission_control' && (c.args).action !== 'resume');
}

/**
 * Applies the rules above.
 * @param policy the robot's compiled policy; null or undefined when it advertised none (or has not
 *   connected since the gateway started)
 * @throws ApiError `robot_inactive`, `policy_rejected` or `remote_config_not_enabled`
 */
export function checkCommand(robot: { robotId: string; active: boolean }, policy: CompiledPolicy | null | undefined, c: ActionAndArgs): void {
  const robotId = robot.robotId;
  if (!robot.active && !isRestCommand(c)) throw apiError('robot_inactive', { robotId });
  if (!POLICY_BOUND.has(c.action)) return;
  if (!policy) throw apiError('policy_rejected', { robotId, reason: 'the robot advertised no command policy' });
  if (policy === PENDING_POLICY) {
    throw apiError('policy_rejected', { robotId, reason: 'the robot\'s command policy is waiting to be compiled (the gateway compiles a bounded amount per second across robots); retry shortly' });
  }
  if (c.action === 'config' && !policy.remoteConfig) throw apiError('remote_config_not_enabled', { robotId, what: 'remote configuration' });
  if (c.action === 'onboard_settings' && !policy.onboardSettings) throw apiError('remote_config_not_enabled', { robotId, what: 'remote onboard settings' });
  const problem = policyProblem(policy, c);
  if (problem) throw apiError('policy_rejected', { robotId, reason: problem });
}
