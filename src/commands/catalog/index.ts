/**
 * The robot command catalog: one declaration per command (a file each, declaration.ts says what
 * one holds; declared.ts, generated from the folder, lists them). The command types, the wire mapping (wire.ts), the policy check (policy-check.ts),
 * the request schemas and routes (src/api), and the scheduler's handling
 * (src/missions/scheduling/command-fires.ts) are derived from this list; the test
 * test/commands/catalog.test.ts checks every declared command reaches each surface it names.
 */
import type { Static } from '@sinclair/typebox';
import type { AnyCommandDeclaration } from './declaration.js';
import { DECLARED } from './declared.js';

export type { MissionControlVerb } from './mission-control.js';
export type { AnyCommandDeclaration, CommandDeclaration, RequestOrigin } from './declaration.js';

type Catalog = (typeof DECLARED)[number];

/** The order the actions were published in; a command not listed follows them, by file name. */
const PUBLISHED_ORDER = [
  'stop', 'start', 'release', 'force_reset', 'mode', 'invoke_action', 'update_settings', 'go_to', 'config', 'onboard_settings', 'mission_start', 'mission_control',
];

/**
 * Every command, in the order `COMMAND_ACTIONS` lists them: the declarations of this folder
 * (declared.ts, written by `npm run gen` from its files), in their published order.
 */
export const COMMAND_CATALOG: readonly Catalog[] = inPublishedOrder(DECLARED.map((d) => d.action), PUBLISHED_ORDER)
  .map((a) => DECLARED.find((d) => d.action === a)!);

/** Every action the gateway can put on a robot's stream. */
export type CommandAction = Catalog['action'];

/** The declaration of `A`. */
export type DeclarationOf<A extends CommandAction> = Extract<Catalog, { action: A }>;

/** Arguments of each action (the declarations' `args` schemas): stored on the record, digested into the audit, copied onto the wire. */
export type CommandArgsByAction = { [A in CommandAction]: Static<DeclarationOf<A>['args']> };

/** The request fields of each action (camelCase; `schedule-command` stores them as they are). */
export type CommandFieldsByAction = { [A in CommandAction]: Static<DeclarationOf<A>['fields']> };

const BY_ACTION = new Map<string, AnyCommandDeclaration>(COMMAND_CATALOG.map((d) => [d.action, d as unknown as AnyCommandDeclaration]));

/** The declaration of an action; throws for a name that is not one (a record of a newer version). */
export function declarationOf(action: string): AnyCommandDeclaration {
  const d = BY_ACTION.get(action);
  if (!d) throw new Error(`unknown robot command action: ${action}`);
  return d;
}

/** The catalog as plain declarations, for code that walks every command. */
export const DECLARATIONS: readonly AnyCommandDeclaration[] = COMMAND_CATALOG as unknown as AnyCommandDeclaration[];

/** Every action, in catalog order. */
export const COMMAND_ACTIONS: readonly CommandAction[] = COMMAND_CATALOG.map((d) => d.action);

const holds = (flag: true | ((args: never) => boolean) | undefined, args: unknown): boolean =>
  flag === true || (typeof flag === 'function' && (flag as (a: unknown) => boolean)(args));

/** Overtakes everything else queued for a robot (spec: stop and pause never wait behind a backlog). */
export function isUrgent(c: { action: CommandAction; args: unknown }): boolean {
  return holds(declarationOf(c.action).urgent, c.args);
}

/**
 * Kept for an offline robot and sent on reconnect, and accepted from an inactive robot (spec,
 * Delivery state: `stop`, `pause`, `cancel`, `abort`): it brings the robot to rest. Every other
 * command to an offline robot fails with `unavailable`: a start, a move or a configuration change
 * delivered minutes later could surprise the people near it.
 */
export function isDeferrable(c: { action: CommandAction; args: unknown }): boolean {
  return holds(declarationOf(c.action).bringsToRest, c.args);
}

/** Request/response actions: the robot reports a CommandResult after its ack. */
export function expectsResult(action: CommandAction): boolean {
  return declarationOf(action).expectsResult === true;
}

/**
 * `names` in a published order: those `pinned` lists first, in its order, then the rest in their
 * given order. Surfaces that were published before the catalog keep their order with it; a new
 * command need not be added to a pin (it follows the pinned ones).
 */
export function inPublishedOrder<T extends string>(names: readonly T[], pinned: readonly string[]): T[] {
  const rank = (n: string): number => {
    const i = pinned.indexOf(n);
    return i === -1 ? pinned.length : i;
  };
  return names.map((n, i) => ({ n, i })).sort((a, b) => rank(a.n) - rank(b.n) || a.i - b.i).map((x) => x.n);
}

type UnionToIntersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;

/** Actions `schedule-command` accepts (declarations with `schedule`). */
export type SchedulableAction = Extract<Catalog, { schedule: object }>['action'];

/** Actions of `control-robot` (declarations with `controlRobot`), without the fleet-wide verbs. */
export type ControlRobotCommandAction = Extract<Catalog, { controlRobot: object }>['action'];

/** The request fields of any schedulable action, each optional: what a command schedule stores. */
export type SchedulableFields = Partial<UnionToIntersection<CommandFieldsByAction[SchedulableAction]>>;

/** snake_case of a camelCase request field: how request bodies spell it (`actionName` -> `action_name`). */
export function bodyName(field: string): string {
  return field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}
