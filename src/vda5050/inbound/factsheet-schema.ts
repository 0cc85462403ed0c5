/**
 * The `factsheet` message (VDA 5050 2.0): what the robot is and what it supports. The 2.0.0 schema
 * file lists its sections next to `properties` rather than in it; this is the structure it meant
 * (as the 2.1.0 file writes it), with the 2.0.0 types, including its odd ones (an envelope's
 * `description` is an integer and a load set's a number there), so a robot built against that file
 * passes.
 */
import { Type, type Static } from '@sinclair/typebox';
import { BoundingBoxReference, header, LoadDimensions, stringEnum } from './schema-parts.js';

export const AGV_KINEMATICS = ['DIFF', 'OMNI', 'THREEWHEEL'] as const;
export const AGV_CLASSES = ['FORKLIFT', 'CONVEYOR', 'TUGGER', 'CARRIER'] as const;
export const LOCALIZATION_TYPES = ['NATURAL', 'REFLECTOR', 'RFID', 'DMC', 'SPOT', 'GRID'] as const;
export const NAVIGATION_TYPES = ['PHYSICAL_LINDE_GUIDED', 'VIRTUAL_LINE_GUIDED', 'AUTONOMOUS'] as const;
export const SUPPORTS = ['SUPPORTED', 'REQUIRED'] as const;
export const ACTION_SCOPES = ['INSTANT', 'NODE', 'EDGE'] as const;
export const VALUE_DATA_TYPES = ['BOOL', 'NUMBER', 'INTEGER', 'FLOAT', 'STRING', 'OBJECT', 'ARRAY'] as const;
export const WHEEL_TYPES = ['DRIVE', 'CASTER', 'FIXED', 'MECANUM'] as const;

const TypeSpecification = Type.Object({
  seriesName: Type.String(),
  seriesDescription: Type.Optional(Type.String()),
  agvKinematic: stringEnum(AGV_KINEMATICS),
  agvClass: stringEnum(AGV_CLASSES),
  maxLoadMass: Type.Number({ minimum: 0 }),
  localizationTypes: Type.Array(stringEnum(LOCALIZATION_TYPES)),
  navigationTypes: Type.Array(stringEnum(NAVIGATION_TYPES)),
});

const PhysicalParameters = Type.Object({
  speedMin: Type.Number(),
  speedMax: Type.Number(),
  accelerationMax: Type.Number(),
  decelerationMax: Type.Number(),
  heightMin: Type.Optional(Type.Number()),
  heightMax: Type.Number(),
  width: Type.Number(),
  length: Type.Number(),
});

const optionalInteger = () => Type.Optional(Type.Integer());

const ProtocolLimits = Type.Object({
  maxStringLens: Type.Object({
    msgLen: optionalInteger(),
    topicSerialLen: optionalInteger(),
    topicElemLen: optionalInteger(),
    idLen: optionalInteger(),
    idNumericalOnly: Type.Optional(Type.Boolean()),
    enumLen: optionalInteger(),
    loadIdLen: optionalInteger(),
  }),
  maxArrayLens: Type.Object({
    'order.nodes': optionalInteger(),
    'order.edges': optionalInteger(),
    'node.actions': optionalInteger(),
    'edge.actions': optionalInteger(),
    'actions.actionsParameters': optionalInteger(),
    instantActions: optionalInteger(),
    'trajectory.knotVector': optionalInteger(),
    'trajectory.controlPoints': optionalInteger(),
    'state.nodeStates': optionalInteger(),
    'state.edgeStates': optionalInteger(),
    'state.loads': optionalInteger(),
    'state.actionStates': optionalInteger(),
    'state.errors': optionalInteger(),
    'state.information': optionalInteger(),
    'error.errorReferences': optionalInteger(),
    'information.infoReferences': optionalInteger(),
  }),
  timing: Type.Object({
    minOrderInterval: Type.Number(),
    minStateInterval: Type.Number(),
    defaultStateInterval: Type.Optional(Type.Number()),
    visualizationInterval: Type.Optional(Type.Number()),
  }),
});

const ProtocolFeatures = Type.Object({
  optionalParameters: Type.Array(Type.Object({
    parameter: Type.String(),
    support: stringEnum(SUPPORTS),
    description: Type.Optional(Type.String()),
  })),
  agvActions: Type.Array(Type.Object({
    actionType: Type.String(),
    actionDescription: Type.Optional(Type.String()),
    actionScopes: Type.Array(stringEnum(ACTION_SCOPES)),
    actionParameters: Type.Optional(Type.Array(Type.Object({
      key: Type.String(),
      valueDataType: stringEnum(VALUE_DATA_TYPES),
      description: Type.Optional(Type.String()),
      isOptional: Type.Optional(Type.Boolean()),
    }))),
    resultDescription: Type.Optional(Type.String()),
  })),
});

const AgvGeometry = Type.Object({
  wheelDefinitions: Type.Optional(Type.Array(Type.Object({
    type: stringEnum(WHEEL_TYPES),
    isActiveDriven: Type.Boolean(),
    isActiveSteered: Type.Boolean(),
    position: Type.Object({ x: Type.Number(), y: Type.Number(), theta: Type.Optional(Type.Number()) }),
    diameter: Type.Number(),
    width: Type.Number(),
    centerDisplacement: Type.Optional(Type.Number()),
    constraints: Type.Optional(Type.String()),
  }))),
  envelopes2d: Type.Optional(Type.Array(Type.Object({
    set: Type.String(),
    polygonPoints: Type.Array(Type.Object({ x: Type.Number(), y: Type.Number() })),
    description: Type.Optional(Type.String()),
  }))),
  envelopes3d: Type.Optional(Type.Array(Type.Object({
    set: Type.String(),
    format: Type.String(),
    data: Type.Optional(Type.Object({})),
    url: Type.Optional(Type.String()),
    description: Type.Optional(Type.Integer()),
  }))),
});

const LoadSet = Type.Object({
  setName: Type.String(),
  loadType: Type.String(),
  loadPositions: Type.Optional(Type.Array(Type.String())),
  /** The 2.0.0 file types this `theta` an integer (unlike every other angle). */
  boundingBoxReference: Type.Optional(Type.Object({ ...BoundingBoxReference.properties, theta: Type.Optional(Type.Integer()) })),
  loadDimensions: Type.Optional(LoadDimensions),
  maxWeigth: Type.Optional(Type.Number()),
  minLoadhandlingHeight: Type.Optional(Type.Number()),
  maxLoadhandlingHeight: Type.Optional(Type.Number()),
  minLoadhandlingDepth: Type.Optional(Type.Number()),
  maxLoadhandlingDepth: Type.Optional(Type.Number()),
  minLoadhandlingTilt: Type.Optional(Type.Number()),
  maxLoadhandlingTilt: Type.Optional(Type.Number()),
  agvSpeedLimit: Type.Optional(Type.Number()),
  agvAccelerationLimit: Type.Optional(Type.Number()),
  agvDecelerationLimit: Type.Optional(Type.Number()),
  pickTime: Type.Optional(Type.Number()),
  dropTime: Type.Optional(Type.Number()),
  description: Type.Optional(Type.Number()),
});

const LoadSpecification = Type.Object({
  loadPositions: Type.Optional(Type.Array(Type.String())),
  loadSets: Type.Optional(Type.Array(LoadSet)),
});

/** Every section is required, as the standard's schema lists them. */
export const FactsheetSchema = Type.Object({
  ...header,
  typeSpecification: TypeSpecification,
  physicalParameters: PhysicalParameters,
  protocolLimits: ProtocolLimits,
  protocolFeatures: ProtocolFeatures,
  agvGeometry: AgvGeometry,
  loadSpecification: LoadSpecification,
  localizationParameters: Type.Optional(Type.Integer()),
});

/** A validated `factsheet` message. */
export type Vda5050Factsheet = Static<typeof FactsheetSchema>;
