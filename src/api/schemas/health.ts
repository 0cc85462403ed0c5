/** GET /healthz and GET /readyz: status words only (no versions, hosts or failing parts). */
import { Type, type Static } from '@sinclair/typebox';
import { named } from './named.js';

export const Liveness = named('Liveness', Type.Object(
  { status: Type.Literal('ok', { description: 'The process is running and its event loop answers.' }) },
  { additionalProperties: false },
));
export type Liveness = Static<typeof Liveness>;

export const Readiness = named('Readiness', Type.Object(
  {
    status: Type.Union([Type.Literal('ready'), Type.Literal('degraded'), Type.Literal('not_ready')], {
      description: '`ready`: the telemetry store answers, LMDB is open and the scheduler runs. `degraded` (also 200): ready, but the telemetry store does not answer; telemetry is accepted and spooled to disk until it does. `not_ready` (503): a check fails. Which check fails is in the metrics (`fleetgw_ready`, `fleetgw_telemetry_store_up`) and the log, not here.',
    }),
  },
  { additionalProperties: false },
));
export type Readiness = Static<typeof Readiness>;
