/**
 * The parts of VDA 5050 2.x messages master control reads and writes, and the readers that map an
 * inbound message (already passed by the inbound gate, src/vda5050/inbound) to them. The readers
 * still check each field they use, so a gap between the gate's schema and this mapping drops the
 * message (naming the field) instead of reading a wrong value.
 */

export type ActionStatus = 'WAITING' | 'INITIALIZING' | 'RUNNING' | 'PAUSED' | 'FINISHED' | 'FAILED';
export type ConnectionState = 'ONLINE' | 'OFFLINE' | 'CONNECTIONBROKEN';
export type BlockingType = 'NONE' | 'SOFT' | 'HARD';

export interface AgvPosition {
  x: number;
  y: number;
  theta: number;
  mapId: string;
  positionInitialized: boolean;
}

export interface Velocity {
  vx: number;
  vy: number;
  omega: number;
}

export interface ActionState {
  actionId: string;
  actionType: string;
  actionStatus: ActionStatus;
  resultDescription: string;
}

export interface ErrorReference {
  referenceKey: string;
  referenceValue: string;
}

export interface VdaError {
  errorType: string;
  errorLevel: 'WARNING' | 'FATAL';
  errorDescription: string;
  errorReferences: ErrorReference[];
}

export interface VdaState {
  orderId: string;
  orderUpdateId: number;
  lastNodeId: string;
  lastNodeSequenceId: number;
  driving: boolean;
  paused: boolean;
  operatingMode: string;
  nodeStates: Array<{ nodeId: string; sequenceId: number; released: boolean }>;
  edgeStates: Array<{ edgeId: string; sequenceId: number }>;
  agvPosition: AgvPosition | null;
  velocity: Velocity | null;
  actionStates: ActionState[];
  batteryState: { batteryCharge: number; batteryVoltage: number; charging: boolean };
  errors: VdaError[];
  safetyState: { eStop: string; fieldViolation: boolean };
  /** `weight` in kg, 0 when the robot gives none. */
  loads: Array<{ loadId: string; loadType: string; weight: number }>;
  /** The robot's clock of the message (ms since the epoch); 0 when it sent none or not a date. */
  timestampMs: number;
}

export interface VdaVisualization {
  agvPosition: AgvPosition | null;
  velocity: Velocity | null;
  timestampMs: number;
}

export interface FactsheetAction {
  actionType: string;
  actionScopes: string[];
  parameters: Array<{ key: string; valueDataType: string; isOptional: boolean }>;
}

export interface VdaFactsheet {
  /** `typeSpecification.seriesName`, '' when absent. */
  seriesName: string;
  agvActions: FactsheetAction[];
}

/** One instant action as published. */
export interface InstantAction {
  actionType: string;
  actionId: string;
  actionDescription?: string;
  blockingType: BlockingType;
  actionParameters?: Array<{ key: string; value: string | number | boolean | unknown[] | Record<string, unknown> }>;
}

export interface OrderNode {
  nodeId: string;
  sequenceId: number;
  released: boolean;
  nodePosition?: { x: number; y: number; theta?: number; mapId: string; allowedDeviationXY?: number; allowedDeviationXy?: number; allowedDeviationTheta?: number };
  actions: InstantAction[];
}

export interface OrderEdge {
  edgeId: string;
  sequenceId: number;
  released: boolean;
  startNodeId: string;
  endNodeId: string;
  maxSpeed?: number;
  actions: InstantAction[];
}

/** An order's body (the header is added when it is published). */
export interface OrderBody {
  orderId: string;
  orderUpdateId: number;
  nodes: OrderNode[];
  edges: OrderEdge[];
}

/** A refused inbound message: the field that made it unreadable. */
export class VdaMessageError extends Error {}

type Obj = Record<string, unknown>;

function obj(v: unknown, field: string): Obj {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new VdaMessageError(`${field} must be an object`);
  return v as Obj;
}

function optObj(v: unknown, field: string): Obj | null {
  return v === undefined || v === null ? null : obj(v, field);
}

function str(o: Obj, k: string, field: string, dflt?: string): string {
  const v = o[k];
  if (typeof v === 'string') return v;
  if (v === undefined && dflt !== undefined) return dflt;
  throw new VdaMessageError(`${field}.${k} must be a string`);
}

function num(o: Obj, k: string, field: string, dflt?: number): number {
  const v = o[k];
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (v === undefined && dflt !== undefined) return dflt;
  throw new VdaMessageError(`${field}.${k} must be a finite number`);
}

function bool(o: Obj, k: string, field: string, dflt?: boolean): boolean {
  const v = o[k];
  if (typeof v === 'boolean') return v;
  if (v === undefined && dflt !== undefined) return dflt;
  throw new VdaMessageError(`${field}.${k} must be a boolean`);
}

/** An array field's elements, at most `max` of them (a robot's longer list is cut, never trusted to be small). */
function arr(o: Obj, k: string, field: string, max: number): unknown[] {
  const v = o[k];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new VdaMessageError(`${field}.${k} must be an array`);
  return v.length > max ? v.slice(0, max) : v;
}

function timestampOf(o: Obj): number {
  const t = o.timestamp;
  if (typeof t !== 'string') return 0;
  const ms = Date.parse(t);
  return Number.isFinite(ms) ? ms : 0;
}

/** The most elements of a list in a robot message the link reads. */
export const MAX_LIST = 1024;

const ACTION_STATUSES = new Set<string>(['WAITING', 'INITIALIZING', 'RUNNING', 'PAUSED', 'FINISHED', 'FAILED']);

function position(v: unknown, field: string): AgvPosition | null {
  const o = optObj(v, field);
  if (o === null) return null;
  return { x: num(o, 'x', field), y: num(o, 'y', field), theta: num(o, 'theta', field), mapId: str(o, 'mapId', field), positionInitialized: bool(o, 'positionInitialized', field, true) };
}

function velocity(v: unknown, field: string): Velocity | null {
  const o = optObj(v, field);
  if (o === null) return null;
  return { vx: num(o, 'vx', field, 0), vy: num(o, 'vy', field, 0), omega: num(o, 'omega', field, 0) };
}

/** A `connection` message's state. */
export function readConnection(m: Obj): ConnectionState {
  const s = str(m, 'connectionState', 'connection');
  if (s !== 'ONLINE' && s !== 'OFFLINE' && s !== 'CONNECTIONBROKEN') throw new VdaMessageError('connection.connectionState must be ONLINE, OFFLINE or CONNECTIONBROKEN');
  return s;
}

/** A `state` message. */
export function readState(m: Obj): VdaState {
  const battery = obj(m.batteryState, 'state.batteryState');
  const safety = obj(m.safetyState, 'state.safetyState');
  return {
    orderId: str(m, 'orderId', 'state', ''),
    orderUpdateId: num(m, 'orderUpdateId', 'state', 0),
    lastNodeId: str(m, 'lastNodeId', 'state', ''),
    lastNodeSequenceId: num(m, 'lastNodeSequenceId', 'state', 0),
    driving: bool(m, 'driving', 'state', false),
    paused: bool(m, 'paused', 'state', false),
    operatingMode: str(m, 'operatingMode', 'state', ''),
    nodeStates: arr(m, 'nodeStates', 'state', MAX_LIST).map((n, i) => {
      const o = obj(n, `state.nodeStates[${i}]`);
      return { nodeId: str(o, 'nodeId', `state.nodeStates[${i}]`), sequenceId: num(o, 'sequenceId', `state.nodeStates[${i}]`), released: bool(o, 'released', `state.nodeStates[${i}]`, true) };
    }),
    edgeStates: arr(m, 'edgeStates', 'state', MAX_LIST).map((e, i) => {
      const o = obj(e, `state.edgeStates[${i}]`);
      return { edgeId: str(o, 'edgeId', `state.edgeStates[${i}]`), sequenceId: num(o, 'sequenceId', `state.edgeStates[${i}]`) };
    }),
    agvPosition: position(m.agvPosition, 'state.agvPosition'),
    velocity: velocity(m.velocity, 'state.velocity'),
    actionStates: arr(m, 'actionStates', 'state', MAX_LIST).map((a, i) => {
      const f = `state.actionStates[${i}]`;
      const o = obj(a, f);
      const status = str(o, 'actionStatus', f);
      if (!ACTION_STATUSES.has(status)) throw new VdaMessageError(`${f}.actionStatus is not a VDA 5050 action status`);
      return { actionId: str(o, 'actionId', f), actionType: str(o, 'actionType', f, ''), actionStatus: status as ActionStatus, resultDescription: str(o, 'resultDescription', f, '') };
    }),
    batteryState: {
      batteryCharge: num(battery, 'batteryCharge', 'state.batteryState'),
      batteryVoltage: num(battery, 'batteryVoltage', 'state.batteryState', 0),
      charging: bool(battery, 'charging', 'state.batteryState'),
    },
    errors: arr(m, 'errors', 'state', MAX_LIST).map((e, i) => {
      const f = `state.errors[${i}]`;
      const o = obj(e, f);
      const level = str(o, 'errorLevel', f);
      return {
        errorType: str(o, 'errorType', f),
        errorLevel: level === 'FATAL' ? 'FATAL' : 'WARNING',
        errorDescription: str(o, 'errorDescription', f, ''),
        errorReferences: arr(o, 'errorReferences', f, 32).map((r, j) => {
          const ro = obj(r, `${f}.errorReferences[${j}]`);
          return { referenceKey: str(ro, 'referenceKey', `${f}.errorReferences[${j}]`), referenceValue: typeof ro.referenceValue === 'string' ? ro.referenceValue : JSON.stringify(ro.referenceValue ?? '') };
        }),
      };
    }),
    safetyState: { eStop: str(safety, 'eStop', 'state.safetyState'), fieldViolation: bool(safety, 'fieldViolation', 'state.safetyState', false) },
    loads: arr(m, 'loads', 'state', MAX_LIST).map((l, i) => {
      const o = obj(l, `state.loads[${i}]`);
      return { loadId: str(o, 'loadId', `state.loads[${i}]`, ''), loadType: str(o, 'loadType', `state.loads[${i}]`, ''), weight: num(o, 'weight', `state.loads[${i}]`, 0) };
    }),
    timestampMs: timestampOf(m),
  };
}

/** A `visualization` message. */
export function readVisualization(m: Obj): VdaVisualization {
  return { agvPosition: position(m.agvPosition, 'visualization.agvPosition'), velocity: velocity(m.velocity, 'visualization.velocity'), timestampMs: timestampOf(m) };
}

/** A `factsheet` message: what master control uses of it. */
export function readFactsheet(m: Obj): VdaFactsheet {
  const type = optObj(m.typeSpecification, 'factsheet.typeSpecification');
  const features = optObj(m.protocolFeatures, 'factsheet.protocolFeatures');
  const actions = features === null ? [] : arr(features, 'agvActions', 'factsheet.protocolFeatures', 256);
  return {
    seriesName: type === null ? '' : str(type, 'seriesName', 'factsheet.typeSpecification', ''),
    agvActions: actions.map((a, i) => {
      const f = `factsheet.protocolFeatures.agvActions[${i}]`;
      const o = obj(a, f);
      return {
        actionType: str(o, 'actionType', f),
        actionScopes: arr(o, 'actionScopes', f, 3).filter((s): s is string => typeof s === 'string'),
        parameters: arr(o, 'actionParameters', f, 64).map((p, j) => {
          const po = obj(p, `${f}.actionParameters[${j}]`);
          return { key: str(po, 'key', `${f}.actionParameters[${j}]`), valueDataType: str(po, 'valueDataType', `${f}.actionParameters[${j}]`, 'STRING'), isOptional: bool(po, 'isOptional', `${f}.actionParameters[${j}]`, false) };
        }),
      };
    }),
  };
}
