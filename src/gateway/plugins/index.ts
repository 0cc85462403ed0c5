/**
 * The gateway's plugins, one per domain module. The composer orders them by `dependsOn`; this list's
 * order only breaks ties. Each plugin sees the store through its write scope: the databases it claims
 * are writable, and in the shared `index` and `meta` the keys under its claimed prefixes; any other
 * write refuses naming the database (and key prefix), its owner and the plugin (src/store/write-scope.ts).
 */
import { keyOwnerPart } from '../../store/ownership.js';
import { writeScope, type StorageOwners } from '../../store/write-scope.js';
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
import { robotsPlugin } from './robots.js';
import { storePlugin } from './store.js';
import { streamPlugin } from './stream.js';
import { telemetryPlugin } from './telemetry.js';
import { usagePlugin } from './usage.js';
import { floorPlansPlugin } from './floor-plans.js';
import { webhooksPlugin } from './webhooks.js';
import { vda5050BrokerPlugin } from './vda5050-broker.js';
import { vda5050Plugin } from './vda5050.js';

/** Builds one plugin over the gateway's context. */
export type PluginFactory = (ctx: GatewayContext) => GatewayPlugin;

/** Every plugin of `fleetgw serve`, built over one context, each with its own write scope of the store. */
export function gatewayPlugins(ctx: GatewayContext): GatewayPlugin[] {
  return withWriteScopes(ctx, [
    storePlugin,
    registryPlugin,
    eventsPlugin,
    authPlugin,
    idempotencyPlugin,
    metricsPlugin,
    streamPlugin,
    alertsPlugin,
    webhooksPlugin,
    usagePlugin,
    telemetryPlugin,
    robotLinkPlugin,
    vda5050BrokerPlugin,
    vda5050Plugin,
    faultsPlugin,
    commandsPlugin,
    alertSourcesPlugin,
    fieldRulesPlugin,
    catalogPlugin,
    missionsPlugin,
    objectsPlugin,
    floorPlansPlugin,
    robotsPlugin,
    httpPlugin,
    readinessPlugin,
  ]);
}

/**
 * Builds each plugin over a context whose `store` part is the plugin's write scope: the databases it
 * claims writable, in the shared `index` and `meta` only the keys under the prefixes it claims, and a
 * write to anything else refuses naming the database (and key prefix), its owner (by these plugins'
 * claims) and the plugin. A context without parts (the ownership tests read only the claims) is passed
 * on as it is.
 */
export function withWriteScopes(ctx: GatewayContext, factories: readonly PluginFactory[]): GatewayPlugin[] {
  const owners = new Map<string, string>();
  const prefixOwners = new Map<string, string>();
  const ownerTable: StorageOwners = {
    ownerOf: (db) => owners.get(db),
    ownerOfKey: (db, key) => prefixOwners.get(`${db}:${keyOwnerPart(key)}`),
  };
  // The scope is built at the plugin's first use of the store, when every plugin's claim is known.
  const scoped = (make: PluginFactory): GatewayPlugin => {
    const self: { plugin?: GatewayPlugin } = {};
    const parts = ctx.parts?.withStoreScope((store) => writeScope(store, self.plugin!.name, self.plugin!.storage, ownerTable));
    self.plugin = make(parts === undefined ? ctx : { ...ctx, parts });
    return self.plugin;
  };
  const plugins = factories.map(scoped);
  for (const p of plugins) {
    for (const db of p.storage.databases) owners.set(db, p.name);
    for (const [db, list] of Object.entries(p.storage.prefixes)) for (const prefix of list) prefixOwners.set(`${db}:${prefix}`, p.name);
  }
  return plugins;
}
