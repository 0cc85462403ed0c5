/**
 * A gateway command as what master control publishes (docs/vda5050.md, "Mapping"): an instant action
 * whose `actionId` is the command id, or an order. The delivery check (delivery.ts) then waits for
 * that action id, or the order id, in the robot's state.
 *
 * | command | VDA 5050 |
 * |---|---|
 * | stop, mission pause | instant action `startPause` (HARD) |
 * | start, mission resume | instant action `stopPause` (HARD) |
 * | release, mission cancel / abort | instant action `cancelOrder` (HARD) |
 * | invoke_action | instant action of that `actionType`, arguments as `actionParameters` |
 * | go_to | order `orderId` = command id: the robot's current node, one edge, the target node |
 * | mission_start | order `orderId` = `mission:{runId}`: one node per step with a position, other steps as node actions |
 */
import { MissionControl_Action, type Command, type MissionStart } from '../../gen/fleetgw/v1/robot_link_pb.js';
import { thetaOfHeading, type MapFrame } from './map-frame.js';
import { UNSUPPORTED_ACTIONS } from './factsheet.js';
import type { InstantAction, OrderBody, OrderEdge, OrderNode, VdaState } from './messages.js';

/** The order id prefix of a mission run's order. */
export const MISSION_ORDER_PREFIX = 'mission:';

/** A mission run's order: what mission progress (mission.ts) needs to know about it. */
export interface MissionOrder {
  runId: string;
  missionId: string;
  /** Index of each order node's step in the template (the start node: -1). */
  stepOfNode: number[];
}

export type Outbound =
  | { kind: 'instantActions'; awaitId: string; urgent: boolean; actions: InstantAction[] }
  | { kind: 'order'; awaitId: string; urgent: false; order: OrderBody; mission: MissionOrder | null }
  | { kind: 'refused'; reason: string };

/** How close to a node counts as on it when the robot starts an order from where it stands, metres. */
const START_DEVIATION_M = 1;

/** A node position's allowed deviation radius, by the name a protocol version gives it. */
export type DeviationKey = 'allowedDeviationXy' | 'allowedDeviationXY';

/**
 * The names a node's allowed deviation radius is written under for robots of this version. VDA 5050
 * 2.0 names it twice: `allowedDeviationXy` in its JSON schema (what stacks generated from it read,
 * vda-5050-lib among them) and `allowedDeviationXY` in its text; 2.1 settled on `allowedDeviationXY`.
 * A 2.0 robot gets both (node positions are open objects: each robot reads the name it knows and
 * ignores the other), so the radius is not silently replaced by the robot's own default.
 */
export function deviationKeysOf(version: string): readonly DeviationKey[] {
  const [major, minor] = version.split('.').map(Number);
  return (major ?? 2) < 2 || ((major ?? 2) === 2 && (minor ?? 0) === 0) ? ['allowedDeviationXy', 'allowedDeviationXY'] : ['allowedDeviationXY'];
}

function instant(cmd: Command, actionType: string, urgent: boolean, description?: string): Outbound {
  return {
    kind: 'instantActions',
    awaitId: cmd.commandId,
    urgent,
    actions: [{ actionType, actionId: cmd.commandId, blockingType: 'HARD', ...(description ? { actionDescription: description.slice(0, 256) } : {}) }],
  };
}

/**
 * The publication of a command, or why this link cannot carry it. `deviationKeys`: the names of the
 * start node's deviation radius ({@link deviationKeysOf} of the robots' protocol version).
 */
export function outboundOf(cmd: Command, state: VdaState | null, frame: MapFrame, deviationKeys: readonly DeviationKey[] = deviationKeysOf('2.0.0')): Outbound {
  const a = cmd.action;
  switch (a.case) {
    case 'stop': return instant(cmd, 'startPause', true, a.value.reason);
    case 'start': return instant(cmd, 'stopPause', false);
    case 'release': return instant(cmd, 'cancelOrder', false);
    case 'missionControl': {
      const v = a.value.action;
      if (v === MissionControl_Action.PAUSE) return instant(cmd, 'startPause', true);
      if (v === MissionControl_Action.RESUME) return instant(cmd, 'stopPause', false);
      if (v === MissionControl_Action.CANCEL || v === MissionControl_Action.ABORT) return instant(cmd, 'cancelOrder', false);
      return { kind: 'refused', reason: 'unknown mission control action' };
    }
    case 'invokeAction': {
      const params = parseObject(a.value.argumentsJson);
      if (params === null) return { kind: 'refused', reason: 'the action arguments are not a JSON object' };
      return {
        kind: 'instantActions',
        awaitId: cmd.commandId,
        urgent: false,
        actions: [{
          actionType: a.value.name,
          actionId: cmd.commandId,
          blockingType: 'HARD',
          actionParameters: Object.entries(params).map(([key, value]) => ({ key, value: value as string })),
        }],
      };
    }
    case 'goTo': {
      const v = a.value;
      const target = frame.fromLatLon(v.latitude, v.longitude);
      return order(cmd.commandId, state, deviationKeys, [{ x: target.x, y: target.y, theta: v.hasHeading ? thetaOfHeading(v.headingDeg) : undefined, actions: [], step: 0 }], v.maxSpeedMps > 0 ? v.maxSpeedMps : undefined, null);
    }
    case 'missionStart': {
      const v = a.value;
      const { points, startActions } = missionPlan(v, cmd.commandId, frame);
      return order(`${MISSION_ORDER_PREFIX}${v.runId}`, state, deviationKeys, points, undefined, { runId: v.runId, missionId: v.missionId }, startActions);
    }
    default: {
      const name = a.case === 'setMode' ? 'mode' : a.case === 'forceReset' ? 'force_reset' : a.case === 'updateSettings' ? 'update_settings' : a.case === 'onboardSettings' ? 'onboard_settings' : String(a.case);
      return { kind: 'refused', reason: UNSUPPORTED_ACTIONS[name] ?? `${name} has no VDA 5050 counterpart` };
    }
  }
}

/**
 * Whether a command sets the robot moving (or may): start, invoke_action, go_to, mission start and
 * resume, the motion commands the gRPC agent refuses after a later stop (src/agent/command-processor.ts).
 */
export function isMotionCommand(cmd: Command): boolean {
  const a = cmd.action;
  if (a.case === 'missionControl') return a.value.action === MissionControl_Action.RESUME;
  return a.case === 'start' || a.case === 'setMode' || a.case === 'invokeAction' || a.case === 'goTo' || a.case === 'missionStart';
}

interface Waypoint {
  x: number;
  y: number;
  theta?: number | undefined;
  actions: InstantAction[];
  step: number;
}

function order(
  orderId: string,
  state: VdaState | null,
  deviationKeys: readonly DeviationKey[],
  points: Waypoint[],
  maxSpeed: number | undefined,
  mission: { runId: string; missionId: string } | null,
  startActions: InstantAction[] = [],
): Outbound {
  const pos = state?.agvPosition;
  if (!pos || !pos.positionInitialized) return { kind: 'refused', reason: 'the robot reports no initialized position to start an order from' };
  const mapId = pos.mapId;
  // The start node is where the robot stands: no heading, because a heading there is one the robot must
  // match within its own tolerance (about 20 degrees in vda-5050-lib), and the last heard heading may be
  // stale; the robot would refuse the order, or turn on the spot before it leaves.
  const nodes: OrderNode[] = [{
    nodeId: state.lastNodeId !== '' ? state.lastNodeId : `${orderId}/start`,
    sequenceId: 0,
    released: true,
    nodePosition: { x: pos.x, y: pos.y, mapId, ...Object.fromEntries(deviationKeys.map((k) => [k, START_DEVIATION_M])) },
    actions: startActions,
  }];
  const edges: OrderEdge[] = [];
  points.forEach((p, i) => {
    const nodeId = `${orderId}/n${i + 1}`;
    edges.push({ edgeId: `${orderId}/e${i + 1}`, sequenceId: 2 * i + 1, released: true, startNodeId: nodes[i]!.nodeId, endNodeId: nodeId, ...(maxSpeed !== undefined ? { maxSpeed } : {}), actions: [] });
    nodes.push({ nodeId, sequenceId: 2 * i + 2, released: true, nodePosition: { x: p.x, y: p.y, ...(p.theta !== undefined ? { theta: p.theta } : {}), mapId }, actions: p.actions });
  });
  return {
    kind: 'order',
    awaitId: orderId,
    urgent: false,
    order: { orderId, orderUpdateId: 0, nodes, edges },
    mission: mission === null ? null : missionOrder(mission, points),
  };
}

/**
 * A mission run's order nodes after the start node (one per step with a place) and the node actions
 * of the start node (steps without a place before the first one). `actionIdPrefix`: the command id
 * the step actions' ids start with.
 */
function missionPlan(v: MissionStart, actionIdPrefix: string, frame: MapFrame): { points: Waypoint[]; startActions: InstantAction[] } {
  const points: Waypoint[] = [];
  const startActions: InstantAction[] = [];
  v.steps.forEach((s, i) => {
    const cfg = parseObject(s.configJson) ?? {};
    const at = pointOf(cfg, frame);
    if (at !== null) {
      points.push({ ...at, actions: [], step: i });
      return;
    }
    // A step without a place is done where the robot is by then.
    const action: InstantAction = {
      actionType: s.kind,
      actionId: `${actionIdPrefix}:${i}`,
      blockingType: 'HARD',
      actionParameters: Object.entries(cfg).map(([key, value]) => ({ key, value: value as string })),
    };
    const last = points[points.length - 1];
    if (last) last.actions.push(action);
    else startActions.push(action);
  });
  return { points, startActions };
}

function missionOrder(mission: { runId: string; missionId: string }, points: readonly Waypoint[]): MissionOrder {
  return { ...mission, stepOfNode: [-1, ...points.map((p) => p.step)] };
}

/**
 * The {@link MissionOrder} of the order {@link outboundOf} publishes for this MissionStart: the same
 * nodes from the same steps, so the same node count and `stepOfNode` (the start node, step -1, is
 * there whatever the robot's state). For an order whose MissionOrder was not kept, as after a gateway
 * restart: the run's MissionStart rebuilds it.
 */
export function missionOrderOf(start: MissionStart, frame: MapFrame): MissionOrder {
  return missionOrder({ runId: start.runId, missionId: start.missionId }, missionPlan(start, '', frame).points);
}

function pointOf(cfg: Record<string, unknown>, frame: MapFrame): { x: number; y: number } | null {
  const n = (k: string): number | null => (typeof cfg[k] === 'number' && Number.isFinite(cfg[k]) ? cfg[k] : null);
  const x = n('x_m');
  const y = n('y_m');
  if (x !== null && y !== null) return { x, y };
  const lat = n('latitude');
  const lon = n('longitude');
  return lat !== null && lon !== null ? frame.fromLatLon(lat, lon) : null;
}

function parseObject(json: string): Record<string, unknown> | null {
  if (json === '') return {};
  try {
    const v: unknown = JSON.parse(json);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
