/** API keys, users and sessions (src/auth). */
import { ApiKeyVerifier } from '../../auth/authenticate.js';
import { SessionService } from '../../auth/users/sessions.js';
import { apiKeyRoutes } from '../../api/routes/api-keys.js';
import { sessionRoutes } from '../../api/routes/sessions.js';
import { userRoutes } from '../../api/routes/users.js';
import type { GatewayContext } from '../parts.js';
import { nothing, type GatewayPlugin } from '../plugin.js';

/** The session service and the API-key verifier the router authenticates with; the routes that manage keys, users and sessions. */
export function authPlugin(ctx: GatewayContext): GatewayPlugin {
  return {
    name: 'auth',
    dependsOn: ['store', 'events', 'idempotency'],
    storage: { databases: ['apikeys', 'users', 'sessions'], prefixes: { index: ['usersByEmail', 'sessionsByUser'] } },
    start: () => {
      const store = ctx.parts.get('store');
      const t = ctx.tunables;
      const sessions = ctx.parts.provide('sessions', new SessionService(store, { idleTimeoutMs: t.sessionIdleTimeoutS * 1000, maxAgeMs: t.sessionMaxAgeS * 1000, log: ctx.logFor('sessions') }));
      ctx.parts.provide('keys', new ApiKeyVerifier(store, sessions));
      return Promise.resolve();
    },
    routes: () => {
      const { parts } = ctx;
      const store = parts.get('store');
      const events = parts.get('events');
      const log = ctx.logFor('api');
      return [
        // Cookies get `Secure` when the gateway serves HTTPS.
        { name: 'sessions', routes: sessionRoutes({ store, events, sessions: parts.get('sessions'), secureCookies: ctx.tls.files !== null, log }) },
        { name: 'api-keys', routes: apiKeyRoutes({ store, events, idempotency: parts.get('idempotency'), log }) },
        { name: 'users', routes: userRoutes({ store, events, log }) },
      ];
    },
    quiesce: nothing,
    stop: nothing,
  };
}
