/** The `visualization` message (VDA 5050 2.0): position and velocity at a higher rate than `state`. */
import { Type, type Static } from '@sinclair/typebox';
import { AgvPosition, header, Velocity } from './schema-parts.js';

export const VisualizationSchema = Type.Object({
  ...header,
  agvPosition: Type.Optional(AgvPosition),
  velocity: Type.Optional(Velocity),
});

/** A validated `visualization` message. */
export type Vda5050Visualization = Static<typeof VisualizationSchema>;
