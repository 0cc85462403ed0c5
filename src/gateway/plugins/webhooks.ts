/** Alert webhooks per organization: records, dead letters and the delivery queue (src/webhooks). */
import { webhookRoutes } from '../../api/routes/webhooks.js';
import { WebhookDelivery } from '../../webhooks/index.js';
import type { GatewayContext } from '../parts.js';
import { nothing, type GatewayPlugin } from '../plugin.js';

/**
 * Subscribes to the alert service once it exists; its stop runs before the alerts' (reverse order), so
 * deliveries still queued or in flight become `gateway_stopped` dead letters while the store is open.
 */
export function webhooksPlugin(ctx: GatewayContext): GatewayPlugin {
  return {
    name: 'webhooks',
    dependsOn: ['store', 'alerts', 'idempotency'],
    storage: { databases: ['webhooks', 'webhookDeadLetters'], prefixes: {} },
    start: () => {
      const webhooks = ctx.parts.provide('webhooks', new WebhookDelivery({ store: ctx.parts.get('store'), log: ctx.logFor('webhooks') }));
      // Queued here, sent off the event loop's path (docs/webhooks.md).
      ctx.parts.get('alerts').service.observe((a, change) => webhooks.onAlert(a, change));
      return Promise.resolve();
    },
    routes: () => [{ name: 'webhooks', routes: webhookRoutes({ store: ctx.parts.get('store'), idempotency: ctx.parts.get('idempotency'), log: ctx.logFor('api') }) }],
    quiesce: nothing,
    stop: async () => {
      await ctx.parts.peek('webhooks')?.close();
    },
  };
}
