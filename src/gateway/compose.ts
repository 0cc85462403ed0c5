/**
 * Composes the gateway's plugins (plugin.ts): checks their storage claims against each other, orders
 * them by `dependsOn`, starts them one by one (collecting each one's routes once it started) and, when
 * a start fails, stops every plugin already started, in reverse, before the failure goes on to the
 * caller. Stopping is the same two phases in reverse start order: every plugin's `quiesce`, then
 * every plugin's `stop`; a hook that throws is logged and the rest still run, so one broken part
 * never leaves the others' timers and sockets open. After a failed start, a hook that has not
 * settled within {@link STOP_PHASE_DEADLINE_MS} is logged as an error naming the plugin and the phase,
 * and the rest stop without waiting for it (the caller sees the stuck hooks and still ends: nothing
 * was served, so nothing is left to drain). A normal stop waits for every hook: a later plugin (the
 * store) must not close under an earlier one still draining into it.
 */
import type { Logger } from 'pino';
import type { StorageOwnership } from '../store/ownership.js';
import type { GatewayPlugin } from './plugin.js';
import type { DeclaredRoutes } from './route-groups.js';

/** After a failed start, how long one plugin's `quiesce` or `stop` may take before the others stop without it. */
export const STOP_PHASE_DEADLINE_MS = 10_000;

/**
 * A start step that failed: the message is the cause's own, `step` names the plugin (`start.<name>`),
 * `stuck` the stop hooks (`<plugin>.<phase>`) that had not settled by their deadline.
 */
export class PluginStartError extends Error {
  constructor(
    readonly step: string,
    cause: unknown,
    readonly stuck: readonly string[] = [],
  ) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.name = 'PluginStartError';
  }
}

/**
 * The plugins in start order: each after every plugin it depends on, otherwise in the given order.
 * Throws on a duplicate name, a dependency on a plugin not in the list, or a dependency cycle.
 */
export function orderPlugins(plugins: readonly GatewayPlugin[]): GatewayPlugin[] {
  const byName = new Map<string, GatewayPlugin>();
  for (const p of plugins) {
    if (byName.has(p.name)) throw new Error(`two plugins are named '${p.name}'`);
    byName.set(p.name, p);
  }
  for (const p of plugins) {
    for (const d of p.dependsOn) if (!byName.has(d)) throw new Error(`plugin '${p.name}' depends on '${d}', which is not composed`);
  }
  const ordered: GatewayPlugin[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (p: GatewayPlugin, path: readonly string[]): void => {
    const s = state.get(p.name);
    if (s === 'done') return;
    if (s === 'visiting') throw new Error(`plugin dependency cycle: ${[...path, p.name].join(' -> ')}`);
    state.set(p.name, 'visiting');
    for (const d of p.dependsOn) visit(byName.get(d)!, [...path, p.name]);
    state.set(p.name, 'done');
    ordered.push(p);
  };
  for (const p of plugins) visit(p, []);
  return ordered;
}

/** Started plugins, stopped together. */
export interface RunningPlugins {
  /** Start order. */
  readonly order: readonly string[];
  /** Quiesces, then stops, every started plugin in reverse; rejects with the first hook failure, after all ran. */
  stop(): Promise<void>;
}

export interface ComposeOptions {
  log: Logger;
  /** Receives every plugin's storage claim before anything starts; a conflicting claim refuses the start. */
  ownership: StorageOwnership;
  /** Receives each plugin's routes once it started (the http plugin takes them from here). */
  routes: DeclaredRoutes;
  /** Called before each start step with `start.<plugin>` (the test fault points). */
  beforeStart: (step: string) => void;
}

/** Claims every plugin's storage, then starts the plugins in dependency order (see the module comment). */
export async function startPlugins(plugins: readonly GatewayPlugin[], opts: ComposeOptions): Promise<RunningPlugins> {
  const ordered = orderPlugins(plugins);
  for (const p of ordered) opts.ownership.claim(p.name, p.storage);
  const started: GatewayPlugin[] = [];
  const stuck: string[] = [];
  const stopAll = async (bounded: boolean): Promise<unknown> => {
    let first: unknown;
    const run = async (p: GatewayPlugin, phase: 'quiesce' | 'stop'): Promise<void> => {
      let timer: NodeJS.Timeout | undefined;
      const deadline = bounded
        ? new Promise<'late'>((resolve) => {
            timer = setTimeout(() => resolve('late'), STOP_PHASE_DEADLINE_MS);
            timer.unref();
          })
        : new Promise<'late'>(() => {});
      try {
        if ((await Promise.race([p[phase](), deadline])) === 'late') {
          stuck.push(`${p.name}.${phase}`);
          opts.log.error({ plugin: p.name, phase, deadlineMs: STOP_PHASE_DEADLINE_MS }, `${p.name}: ${phase} did not finish within ${STOP_PHASE_DEADLINE_MS / 1000} s; the rest stop without it`);
        }
      } catch (err: unknown) {
        first ??= err;
        opts.log.error({ err, plugin: p.name, phase }, `${p.name}: ${phase} failed: ${err instanceof Error ? err.message : String(err)}`);
      } finally {
        clearTimeout(timer);
      }
    };
    const reverse = [...started].reverse();
    for (const p of reverse) await run(p, 'quiesce');
    for (const p of reverse) await run(p, 'stop');
    return first;
  };
  for (const p of ordered) {
    const step = `start.${p.name}`;
    try {
      opts.beforeStart(step);
      // Counted as started before its start resolves: a start that fails halfway has parts to stop.
      started.push(p);
      await p.start();
      opts.routes.add(p.name, p.routes());
    } catch (err: unknown) {
      await stopAll(true);
      throw new PluginStartError(step, err, stuck);
    }
  }
  let stopping: Promise<void> | undefined;
  return {
    order: ordered.map((p) => p.name),
    stop: () =>
      (stopping ??= stopAll(false).then((first) => {
        if (first !== undefined) throw first instanceof Error ? first : new Error('a plugin failed to stop', { cause: first });
      })),
  };
}
