/**
 * The plugin contract of the gateway (fastify's encapsulation is the model): each domain module is
 * one plugin that names the plugins it builds on, the LMDB storage it alone opens and writes, its
 * routes, and its start and stop hooks. The composer (compose.ts) starts plugins in dependency order and stops them in
 * reverse; a failed start stops whatever had started. Every member is required: a plugin with nothing
 * to do in a phase says so with an empty hook, so no caller has to skip a missing one.
 */
import type { StorageClaim } from '../store/ownership.js';
import type { RouteGroup } from './route-groups.js';

/** One module of the gateway as the composer sees it. */
export interface GatewayPlugin {
  /** Unique; names the start step in logs and the start fault point (`start.<name>`). */
  readonly name: string;
  /** Plugins that must have started before this one (and stop after it). */
  readonly dependsOn: readonly string[];
  /** The storage this plugin owns: its named databases, and its key prefixes in the shared ones. The `store` part it reads is scoped to this claim: a write to another database, or to a key of a shared one outside its prefixes, throws (src/store/write-scope.ts). */
  readonly storage: StorageClaim;
  /** Builds and starts the plugin's parts; a throw aborts the gateway's start. */
  start(): Promise<void>;
  /**
   * The REST routes this plugin serves, read by the composer right after its start (so built over the
   * parts it and its dependencies provide); the http plugin serves those of every plugin started
   * before it. A plugin without routes returns [].
   */
  routes(): readonly RouteGroup[];
  /**
   * First phase of shutdown, in reverse start order: stop taking new work from outside (listening
   * sockets, robot streams) while every part is still there to finish what is in flight.
   */
  quiesce(): Promise<void>;
  /** Second phase, in reverse start order: stop timers, flush, release. Safe after a partial start. */
  stop(): Promise<void>;
}

/** A plugin with no storage of its own. */
export const NO_STORAGE: StorageClaim = { databases: [], prefixes: {} };

/** A plugin with no routes of its own. */
export const noRoutes = (): readonly RouteGroup[] => [];

/** A hook that does nothing, for the phases a plugin has no work in. */
export const nothing = (): Promise<void> => Promise.resolve();
