/** Idempotency-Key claims and their purge (src/idempotency). */
import { IdempotencyClaims, startIdempotencyPurger } from '../../idempotency/index.js';
import type { GatewayContext } from '../parts.js';
import { nothing, noRoutes, type GatewayPlugin } from '../plugin.js';

/** The store's claims (one set per store) and the hourly purge of expired ones. */
export function idempotencyPlugin(ctx: GatewayContext): GatewayPlugin {
  let stopPurger = (): void => {};
  return {
    name: 'idempotency',
    dependsOn: ['store'],
    storage: { databases: ['idempotency'], prefixes: { index: ['idemExpiry'] } },
    start: () => {
      const store = ctx.parts.get('store');
      ctx.parts.provide('idempotency', new IdempotencyClaims(store));
      stopPurger = startIdempotencyPurger(store, { log: ctx.logFor('idempotency') });
      return Promise.resolve();
    },
    routes: noRoutes,
    quiesce: nothing,
    stop: () => {
      stopPurger();
      return Promise.resolve();
    },
  };
}
