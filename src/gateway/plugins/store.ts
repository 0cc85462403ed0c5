/** The LMDB environment: opened first and closed last (unless a test passed in a store it keeps). */
import { openStore } from '../../store/lmdb.js';
import type { WriteFailure } from '../../store/background-writes.js';
import type { GatewayContext } from '../parts.js';
import { NO_STORAGE, nothing, noRoutes, type GatewayPlugin } from '../plugin.js';

/** A failing disk fails every write: one line per database and owner a minute is enough to see it. */
const LOG_EVERY_MS = 60_000;

/** Opens `<dataDir>/lmdb`, or serves the override store (which the caller then closes). */
export function storePlugin(ctx: GatewayContext): GatewayPlugin {
  const given = ctx.opts.overrides?.store;
  let unsubscribe = (): void => {};
  return {
    name: 'store',
    dependsOn: [],
    storage: NO_STORAGE,
    start: () => {
      const store = ctx.parts.provide('store', given ?? openStore(ctx.opts.dataDir));
      const log = ctx.logFor('store');
      const lastLogged = new Map<string, { atMs: number; unlogged: number }>();
      unsubscribe = store.writes.onFailure((f: WriteFailure) => {
        const key = `${f.owner}\0${f.db}`;
        const seen = lastLogged.get(key);
        const now = Date.now();
        if (seen !== undefined && now - seen.atMs < LOG_EVERY_MS) {
          seen.unlogged++;
          return;
        }
        const unlogged = seen?.unlogged ?? 0;
        lastLogged.set(key, { atMs: now, unlogged: 0 });
        const message = f.err instanceof Error ? f.err.message : String(f.err);
        log.error({ err: f.err, owner: f.owner, db: f.db, unlogged }, `LMDB write to '${f.db}' by ${f.owner} failed: ${message}`);
      });
      return Promise.resolve();
    },
    routes: noRoutes,
    quiesce: nothing,
    stop: async () => {
      unsubscribe();
      const store = ctx.parts.peek('store');
      if (given === undefined && store !== undefined) await store.close();
    },
  };
}
