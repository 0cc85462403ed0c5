/**
 * Building blocks of the VDA 5050 2.0 inbound message schemas (connection, state, visualization,
 * factsheet), written after the standard's JSON schemas (github.com/VDA5050/VDA5050, json_schemas at
 * tag 2.0.0). Objects stay open (`additionalProperties` unset) as in the standard: a robot may send
 * fields of a later minor version. Where the 2.0.0 schema files disagree with the standard's text
 * (and its own later corrections) the text wins; each such place says so.
 */
import { Type, type TUnsafe } from '@sinclair/typebox';

/**
 * π as the standard's schemas bound angles (to 11 decimals). Slightly above Math.PI, so a robot that
 * rounds π up to the standard's precision still passes.
 */
export const PI_BOUND = 3.14159265359;

/** A string of one of `values` (JSON schema `enum`, validated as one keyword, not a union). */
export function stringEnum<const T extends readonly string[]>(values: T): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values] });
}

/** An angle in radians, [-π, π]. */
export const angle = () => Type.Number({ minimum: -PI_BOUND, maximum: PI_BOUND });

/**
 * The protocol header every message carries. The 2.0.0 visualization schema leaves all of it
 * optional; the standard's text (protocol header) makes it part of every message, and the gateway
 * needs it (identity, version, ordering), so it is required on every topic here.
 */
export const header = {
  headerId: Type.Integer({ description: 'Per topic, incremented by 1 with each message the robot sends.' }),
  timestamp: Type.String({ format: 'date-time', description: 'ISO 8601, with a time zone.' }),
  version: Type.String({ description: 'Protocol version, [major].[minor].[patch].' }),
  manufacturer: Type.String(),
  serialNumber: Type.String(),
};

/** The robot's position (state and visualization `agvPosition`). */
export const AgvPosition = Type.Object({
  x: Type.Number(),
  y: Type.Number(),
  theta: angle(),
  mapId: Type.String(),
  mapDescription: Type.Optional(Type.String()),
  positionInitialized: Type.Boolean(),
  localizationScore: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  deviationRange: Type.Optional(Type.Number()),
});

/** The robot's velocity in vehicle coordinates. */
export const Velocity = Type.Object({
  vx: Type.Optional(Type.Number()),
  vy: Type.Optional(Type.Number()),
  omega: Type.Optional(Type.Number()),
});

/**
 * A node's position in `nodeStates`: the order's node position (the standard's text defines it
 * there). `theta` is optional as in the order; the 2.0.0 state schema file required it.
 */
export const NodePosition = Type.Object({
  x: Type.Number(),
  y: Type.Number(),
  theta: Type.Optional(angle()),
  allowedDeviationXy: Type.Optional(Type.Number({ minimum: 0 })),
  allowedDeviationTheta: Type.Optional(Type.Number({ minimum: -PI_BOUND, maximum: 3.141592654 })),
  mapId: Type.String(),
  mapDescription: Type.Optional(Type.String()),
});

/**
 * An edge's NURBS trajectory. A control point's `weight` is optional (the text: "when not defined,
 * the default will be 1.0"; the 2.0.0 file required it, 2.1.0 corrected that).
 */
export const Trajectory = Type.Object({
  degree: Type.Integer({ minimum: 1 }),
  knotVector: Type.Array(Type.Number({ minimum: 0, maximum: 1 })),
  controlPoints: Type.Array(Type.Object({
    x: Type.Number(),
    y: Type.Number(),
    weight: Type.Optional(Type.Number()),
    orientation: Type.Optional(angle()),
  })),
});

/** A load's bounding box reference point on the robot. */
export const BoundingBoxReference = Type.Object({
  x: Type.Number(),
  y: Type.Number(),
  z: Type.Number(),
  theta: Type.Optional(Type.Number()),
});

/** A load's dimensions in metres. */
export const LoadDimensions = Type.Object({
  length: Type.Number(),
  width: Type.Number(),
  height: Type.Optional(Type.Number()),
});

/** A key-value reference of an error or an information entry. */
export const Reference = Type.Object({
  referenceKey: Type.String(),
  referenceValue: Type.String(),
});
