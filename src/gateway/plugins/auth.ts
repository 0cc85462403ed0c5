/** API keys, users and sessions (src/auth). */
import { ApiKeyVerifier } from '../../auth/authenticate.js';
import { SessionService } from '../../auth/users/sessions.js';
import type { GatewayContext } from '../parts.js';
import { nothing, type GatewayPlugin } from '../plugin.js';

/** The session service and the API-key verifier the router authenticates with. */
export function authPlugin(ctx: GatewayContext): GatewayPlugin {
  return {
    name: 'auth',
    dependsOn: ['store'],
    storage: { databases: ['apikeys', 'users', 'sessions'], prefixes: { index: ['usersByEmail', 'sessionsByUser'] } },
    start: () => {
      const store = ctx.parts.get('store');
      const t = ctx.tunables;
      const sessions = ctx.parts.provide('sessions', new SessionService(store, { idleTimeoutMs: t.sessionIdleTimeoutS * 1000, maxAgeMs: t.sessionMaxAgeS * 1000, log: ctx.logFor('sessions') }));
      ctx.parts.provide('keys', new ApiKeyVerifier(store, sessions));
      return Promise.resolve();
    },
    quiesce: nothing,
    stop: nothing,
  };
}
