/** `go_to`: a one-shot geographic destination inside the robot's advertised go-to area. */
import { Type } from '@sinclair/typebox';
import { pointInRing } from '../policy-rules.js';
import { declareCommand } from './declaration.js';

const OrNull = Type.Union([Type.Number(), Type.Null()]);

export const goTo = declareCommand({
  action: 'go_to',
  /** `headingDeg` / `maxSpeedMps` null: the robot's choice. */
  args: Type.Object({ latitude: Type.Number(), longitude: Type.Number(), headingDeg: OrNull, maxSpeedMps: OrNull }),
  wire: {
    case: 'goTo',
    toWire: (a) => ({
      latitude: a.latitude,
      longitude: a.longitude,
      hasHeading: a.headingDeg !== null,
      headingDeg: a.headingDeg ?? 0,
      maxSpeedMps: a.maxSpeedMps ?? 0,
    }),
  },
  policy: {
    kind: 'bound',
    check: (p, a) => {
      if (!p.goToArea) return 'the robot accepts no go-to targets';
      return pointInRing(a.latitude, a.longitude, p.goToArea) ? null : 'the target lies outside the robot\'s go-to area';
    },
  },
  fields: Type.Object({
    latitude: Type.Number({ minimum: -90, maximum: 90, description: 'WGS84; the target must lie inside the robot\'s advertised go-to area.' }),
    longitude: Type.Number({ minimum: -180, maximum: 180 }),
    headingDeg: Type.Optional(Type.Number({ minimum: 0, exclusiveMaximum: 360, description: 'Heading on arrival, degrees clockwise from north; omitted: any.' })),
    maxSpeedMps: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 20, description: 'Speed cap for this trip, m/s; omitted: the robot\'s default.' })),
  }),
  toArgs: (f) => ({ latitude: f.latitude, longitude: f.longitude, headingDeg: f.headingDeg ?? null, maxSpeedMps: f.maxSpeedMps ?? null }),
  route: {
    segment: 'go-to',
    operationId: 'robotGoTo',
    summary: "Assign a one-shot geographic destination inside the robot's advertised go-to area (optional heading and speed cap).",
  },
});
