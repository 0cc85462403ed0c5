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
import { declarationOf, isDeferrable } from './catalog/index.js';
import { PENDING_POLICY, type CompiledPolicy } from './policy.js';
import type { ActionAndArgs } from './types.js';

export { pointInRing } from './policy-rules.js';

/**
 * Applies the rules above (each command's own rules are its declaration's `policy`,
 * src/commands/catalog).
 * @param policy the robot's compiled policy; null or undefined when it advertised none (or has not
 *   connected since the gateway started)
 * @throws ApiError `robot_inactive`, `policy_rejected` or `remote_config_not_enabled`
 */
export function checkCommand(robot: { robotId: string; active: boolean }, policy: CompiledPolicy | null | undefined, c: ActionAndArgs): void {
  const robotId = robot.robotId;
  if (!robot.active && !isDeferrable(c)) throw apiError('robot_inactive', { robotId });
  const rules = declarationOf(c.action).policy;
  if (rules.kind === 'free') return;
  if (!policy) throw apiError('policy_rejected', { robotId, reason: 'the robot advertised no command policy' });
  if (policy === PENDING_POLICY) {
    throw apiError('policy_rejected', { robotId, reason: 'the robot\'s command policy is waiting to be compiled (the gateway compiles a bounded amount per second across robots); retry shortly' });
  }
  if (rules.optIn !== undefined && !policy[rules.optIn]) {
    throw apiError('remote_config_not_enabled', { robotId, what: OPT_IN_NAMES[rules.optIn] });
  }
  const problem = rules.check?.(policy, c.args) ?? null;
  if (problem) throw apiError('policy_rejected', { robotId, reason: problem });
}

/** How a missing opt-in is named in the error. */
const OPT_IN_NAMES = { remoteConfig: 'remote configuration', onboardSettings: 'remote onboard settings' } as const;
