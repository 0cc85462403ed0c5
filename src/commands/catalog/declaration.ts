/**
 * The shape of one robot command's declaration. Everything the gateway does with a command that is
 * specific to it is here: its stored arguments, how it goes on the wire, whether it overtakes a
 * backlog or is kept for an offline robot, which policy rules apply, and where it is offered (the
 * control-robot tool, schedule-command, its own nested route). The command types, the wire mapping,
 * the policy check, the request schemas, the routes and the scheduler's handling are derived from
 * the catalog of these (index.ts); docs/adding-a-command.md walks through adding one.
 */
import type { MessageInitShape } from '@bufbuild/protobuf';
import type { Static, TObject, TSchema } from '@sinclair/typebox';
import type { CommandSchema } from '../../gen/fleetgw/v1/robot_link_pb.js';
import type { CompiledPolicy } from '../policy.js';

/** The proto `Command.action` oneof, as `create(CommandSchema, …)` takes it. */
type WireOneof = NonNullable<MessageInitShape<typeof CommandSchema>['action']>;
/** The name of a `Command.action` case (`setMode`, `goTo`, …). */
export type WireCase = WireOneof['case'];
/** The message of one `Command.action` case. */
export type WireValue<C extends WireCase> = Extract<WireOneof, { case: C }>['value'];

/**
 * Where a request names the command: the gateway-chosen text a stop carries when the caller gave no
 * reason (`control-robot stop`, `scheduled stop`, ...).
 */
export interface RequestOrigin {
  defaultReason: string;
}

/** The opt-in of the robot's policy a request/response command needs (`CompiledPolicy` flag). */
export type PolicyOptIn = 'remoteConfig' | 'onboardSettings';

/**
 * The gateway-side policy rules of a command (policy-check.ts applies them).
 * `free`: accepted without an advertised policy (stop, start, missions: those carry their own
 * checks). `bound`: the robot must have advertised a compiled policy; `optIn` names the flag it
 * must have set; `check` says why the policy refuses these arguments, or null.
 */
export type CommandPolicy<Args> =
  | { kind: 'free' }
  | { kind: 'bound'; optIn?: PolicyOptIn; check?: (policy: CompiledPolicy, args: Args) => string | null };

/**
 * One robot command.
 * @typeParam A the action name (stored on the record, published in the APIs)
 * @typeParam S the TypeBox schema of the stored arguments
 * @typeParam C the proto `Command.action` case it is sent as
 * @typeParam F the TypeBox object of its request fields (camelCase; snake_case in request bodies)
 */
export interface CommandDeclaration<A extends string, S extends TSchema, C extends WireCase, F extends TObject> {
  action: A;
  /** The arguments as stored on the record and digested into the audit (the source of `CommandArgsByAction`). */
  args: S;
  /** The proto case and the copy of the arguments onto its message. */
  wire: { case: C; toWire: (args: Static<S>) => WireValue<C> };
  /**
   * Overtakes everything queued for the robot (first in a reconnect flush, own lane on the agent,
   * folded when too many are pending). `true`, or a test of the arguments.
   */
  urgent?: true | ((args: Static<S>) => boolean);
  /**
   * Brings the robot to rest: accepted from an inactive robot, and kept for an offline robot and
   * sent on reconnect. Anything else to an offline robot is refused.
   */
  bringsToRest?: true | ((args: Static<S>) => boolean);
  policy: CommandPolicy<Static<S>>;
  /** A request/response command: the robot reports a CommandResult after its ack. */
  expectsResult?: true;
  /**
   * The fields a request gives (camelCase; a body spells them snake_case: `actionName` is
   * `action_name`). `Type.Optional` marks the ones that may be left out. A command that is offered
   * by none of the request surfaces below has none.
   */
  fields: F;
  /** The arguments from a request's fields (validated by the surface's schema before). */
  toArgs: (fields: Static<F>, origin: RequestOrigin) => Static<S>;
  /**
   * An action of `POST /v1/agent/control-robot`. `permission`: needed besides `robots:write`;
   * `oneTarget`: exactly one robot; `fleetWide`: a second verb that targets every active robot of
   * the fleet instead of a robot list (`stop_all`).
   */
  controlRobot?: { permission?: 'operations:control'; oneTarget?: true; fleetWide?: string };
  /** An action `schedule-command` accepts; the schedule stores the request fields (camelCase). */
  schedule?: { oneTarget?: true };
  /**
   * Its own nested route, `POST /v1/orgs/{org_id}/fleets/{fleet_id}/robots/{robot_id}/{segment}`,
   * whose body is the request fields plus the optional ack wait. `largeBody`: free-form fields
   * (128 KiB cap instead of 4 KiB).
   */
  route?: { segment: string; operationId: string; summary: string; largeBody?: true };
  /**
   * A request/response exchange: `GET` (read) and `POST` (write) of
   * `…/robots/{robot_id}/{segment}`, answered with the robot's CommandResult.
   */
  exchange?: { segment: string; what: string; readOperationId: string; updateOperationId: string };
}

/** Any declaration (the catalog's element type). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyCommandDeclaration = CommandDeclaration<string, TSchema, WireCase, TObject<any>>;

/**
 * Declares a command; the identity, there to infer the declaration's types (including which
 * surfaces it is offered on, so `SchedulableAction` and the like are exact unions).
 */
export function declareCommand<
  A extends string,
  S extends TSchema,
  C extends WireCase,
  F extends TObject,
  Sch extends object | undefined = undefined,
  Ctl extends object | undefined = undefined,
>(
  d: CommandDeclaration<A, S, C, F> & { schedule?: Sch; controlRobot?: Ctl },
): CommandDeclaration<A, S, C, F> & { schedule: Sch; controlRobot: Ctl } {
  return d as CommandDeclaration<A, S, C, F> & { schedule: Sch; controlRobot: Ctl };
}
