/**
 * The gateway's plugins, one per domain module. The composer orders them by `dependsOn`; this list's
 * order only breaks ties.
 */
import type { GatewayContext } from '../parts.js';
import type { GatewayPlugin } from '../plugin.js';
import { alertSourcesPlugin, alertsPlugin } from './alerts.js';
import { authPlugin } from './auth.js';
import { catalogPlugin } from './catalog.js';
import { commandsPlugin } from './commands.js';
import { eventsPlugin } from './events.js';
import { faultsPlugin } from './faults.js';
import { fieldRulesPlugin } from './field-rules.js';
import { httpPlugin } from './http.js';
import { idempotencyPlugin } from './idempotency.js';
import { metricsPlugin } from './metrics.js';
import { missionsPlugin } from './missions.js';
import { objectsPlugin } from './objects.js';
import { readinessPlugin } from './readiness.js';
import { registryPlugin } from './registry.js';
import { robotLinkPlugin } from './robotlink.js';
import { storePlugin } from './store.js';
import { streamPlugin } from './stream.js';
import { telemetryPlugin } from './telemetry.js';
import { usagePlugin } from './usage.js';
import { floorPlansPlugin } from './floor-plans.js';
import { webhooksPlugin } from './webhooks.js';
import { vda5050BrokerPlugin } from './vda5050-broker.js';
import { vda5050Plugin } from './vda5050.js';

/** Every plugin of `fleetgw serve`, built over one context. */
export function gatewayPlugins(ctx: GatewayContext): GatewayPlugin[] {
  return [
    storePlugin(ctx),
    registryPlugin(ctx),
    eventsPlugin(ctx),
    authPlugin(ctx),
    idempotencyPlugin(ctx),
    metricsPlugin(ctx),
    streamPlugin(ctx),
    alertsPlugin(ctx),
    webhooksPlugin(ctx),
    usagePlugin(ctx),
    telemetryPlugin(ctx),
    robotLinkPlugin(ctx),
    vda5050BrokerPlugin(ctx),
    vda5050Plugin(ctx),
    faultsPlugin(ctx),
    commandsPlugin(ctx),
    alertSourcesPlugin(ctx),
    fieldRulesPlugin(ctx),
    catalogPlugin(ctx),
    missionsPlugin(ctx),
    objectsPlugin(ctx),
    floorPlansPlugin(ctx),
    httpPlugin(ctx),
    readinessPlugin(ctx),
  ];
}
