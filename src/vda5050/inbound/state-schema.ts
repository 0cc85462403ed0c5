/** The `state` message (VDA 5050 2.0): the robot's whole state, sent on change and periodically. */
import { Type, type Static } from '@sinclair/typebox';
import { AgvPosition, BoundingBoxReference, header, LoadDimensions, NodePosition, Reference, stringEnum, Trajectory, Velocity } from './schema-parts.js';

/** Largest `orderUpdateId` and `lastNodeSequenceId` the standard allows (its uint32 range, as written). */
const ID_MAX = 4294967296;

export const OPERATING_MODES = ['AUTOMATIC', 'SEMIAUTOMATIC', 'MANUAL', 'SERVICE', 'TEACHIN'] as const;
/** `PAUSED` is in the standard's text (2.0) and its 2.1.0 schema; the 2.0.0 schema file left it out. */
export const ACTION_STATUSES = ['WAITING', 'INITIALIZING', 'RUNNING', 'PAUSED', 'FINISHED', 'FAILED'] as const;
export const ERROR_LEVELS = ['WARNING', 'FATAL'] as const;
export const INFO_LEVELS = ['INFO', 'DEBUG'] as const;
export const E_STOPS = ['AUTOACK', 'MANUAL', 'REMOTE', 'NONE'] as const;

const NodeState = Type.Object({
  nodeId: Type.String(),
  sequenceId: Type.Integer(),
  nodeDescription: Type.Optional(Type.String()),
  nodePosition: Type.Optional(NodePosition),
  released: Type.Boolean(),
});

const EdgeState = Type.Object({
  edgeId: Type.String(),
  sequenceId: Type.Integer(),
  edgeDescription: Type.Optional(Type.String()),
  released: Type.Boolean(),
  trajectory: Type.Optional(Trajectory),
});

const Load = Type.Object({
  loadId: Type.Optional(Type.String()),
  loadType: Type.Optional(Type.String()),
  loadPosition: Type.Optional(Type.String()),
  boundingBoxReference: Type.Optional(BoundingBoxReference),
  loadDimensions: Type.Optional(LoadDimensions),
  weight: Type.Optional(Type.Number()),
});

const ActionState = Type.Object({
  actionId: Type.String(),
  actionType: Type.Optional(Type.String()),
  actionDescription: Type.Optional(Type.String()),
  actionStatus: stringEnum(ACTION_STATUSES),
  resultDescription: Type.Optional(Type.String()),
});

const BatteryState = Type.Object({
  batteryCharge: Type.Number(),
  batteryVoltage: Type.Optional(Type.Number()),
  batteryHealth: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })),
  charging: Type.Boolean(),
  /** Integer as in the standard's schema (uint32 in its text). */
  reach: Type.Optional(Type.Integer({ minimum: 0, maximum: 4294967295 })),
});

const RobotError = Type.Object({
  errorType: Type.String(),
  errorReferences: Type.Optional(Type.Array(Reference)),
  errorDescription: Type.Optional(Type.String()),
  errorLevel: stringEnum(ERROR_LEVELS),
});

const Information = Type.Object({
  infoType: Type.String(),
  infoReferences: Type.Optional(Type.Array(Reference)),
  infoDescription: Type.Optional(Type.String()),
  infoLevel: stringEnum(INFO_LEVELS),
});

const SafetyState = Type.Object({
  eStop: stringEnum(E_STOPS),
  fieldViolation: Type.Boolean(),
});

export const StateSchema = Type.Object({
  ...header,
  orderId: Type.String(),
  orderUpdateId: Type.Integer({ minimum: 0, maximum: ID_MAX }),
  zoneSetId: Type.Optional(Type.String()),
  lastNodeId: Type.String(),
  lastNodeSequenceId: Type.Integer({ minimum: 0, maximum: ID_MAX }),
  driving: Type.Boolean(),
  paused: Type.Optional(Type.Boolean()),
  newBaseRequest: Type.Optional(Type.Boolean()),
  distanceSinceLastNode: Type.Optional(Type.Number()),
  operatingMode: stringEnum(OPERATING_MODES),
  nodeStates: Type.Array(NodeState),
  edgeStates: Type.Array(EdgeState),
  agvPosition: Type.Optional(AgvPosition),
  velocity: Type.Optional(Velocity),
  loads: Type.Optional(Type.Array(Load)),
  actionStates: Type.Array(ActionState),
  batteryState: BatteryState,
  errors: Type.Array(RobotError),
  information: Type.Optional(Type.Array(Information)),
  safetyState: SafetyState,
});

/** A validated `state` message. */
export type Vda5050State = Static<typeof StateSchema>;
