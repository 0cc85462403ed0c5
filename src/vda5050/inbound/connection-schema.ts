/** The `connection` message (VDA 5050 2.0): the robot's connection state, also its MQTT last will. */
import { Type, type Static } from '@sinclair/typebox';
import { header, stringEnum } from './schema-parts.js';

export const CONNECTION_STATES = ['ONLINE', 'OFFLINE', 'CONNECTIONBROKEN'] as const;

export const ConnectionSchema = Type.Object({
  ...header,
  connectionState: stringEnum(CONNECTION_STATES),
});

/** A validated `connection` message. */
export type Vda5050Connection = Static<typeof ConnectionSchema>;
