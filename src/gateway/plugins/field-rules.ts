/** Field rules: records, their rule set versions and delivery to robots (src/fleet/safety/field-rules). */
import { fieldRuleRoutes } from '../../api/routes/field-rules.js';
import { FieldRuleDelivery, FieldRuleService } from '../../fleet/safety/field-rules/index.js';
import type { GatewayContext } from '../parts.js';
import { nothing, type GatewayPlugin } from '../plugin.js';

/**
 * Rule sets go out in the link's onLinkOpening, which runs before every onOnline listener (the
 * command service's outbox resend among them), whatever order the listeners were added in.
 */
export function fieldRulesPlugin(ctx: GatewayContext): GatewayPlugin {
  return {
    name: 'field-rules',
    dependsOn: ['registry', 'events', 'robotlink', 'idempotency'],
    storage: { databases: ['fieldRules'], prefixes: { index: ['fieldRulesByFleet'], meta: ['fieldRuleSetVersion'] } },
    start: () => {
      const store = ctx.parts.get('store');
      const delivery = ctx.parts.provide(
        'fieldRuleDelivery',
        new FieldRuleDelivery({ store, link: ctx.parts.get('link'), log: ctx.logFor('field-rules'), ackTimeoutMs: ctx.tunables.fieldRuleAckTimeoutMs }),
      );
      ctx.parts.provide('fieldRules', new FieldRuleService(store, ctx.parts.get('events'), delivery));
      return Promise.resolve();
    },
    routes: () => {
      const { parts } = ctx;
      return [{ name: 'field-rules', routes: fieldRuleRoutes({ store: parts.get('store'), identity: parts.get('identity'), fieldRules: parts.get('fieldRules'), idempotency: parts.get('idempotency') }) }];
    },
    quiesce: nothing,
    stop: () => {
      ctx.parts.peek('fieldRuleDelivery')?.close();
      return Promise.resolve();
    },
  };
}
