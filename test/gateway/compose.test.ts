// The plugin composer: dependency order, rollback of a failed start in reverse, two-phase stop that
// runs every hook even when one throws, storage claims checked before anything starts, and each
// plugin's routes collected once it started.
import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { orderPlugins, PluginStartError, startPlugins, STOP_PHASE_DEADLINE_MS } from '../../src/gateway/compose.js';
import type { RouteDef } from '../../src/api/route.js';
import type { GatewayPlugin } from '../../src/gateway/plugin.js';
import { DeclaredRoutes, orderRouteGroups, type RouteGroup } from '../../src/gateway/route-groups.js';
import { StorageOwnership, type StorageClaim } from '../../src/store/ownership.js';

const quiet = pino({ enabled: false });

function recorder() {
  const calls: string[] = [];
  const plugin = (
    name: string,
    dependsOn: string[] = [],
    o: { failStart?: boolean; failStop?: boolean; storage?: StorageClaim; routes?: RouteGroup[]; onStart?: () => void } = {},
  ): GatewayPlugin => ({
    name,
    dependsOn,
    storage: o.storage ?? { databases: [], prefixes: {} },
    start: () => {
      calls.push(`start ${name}`);
      o.onStart?.();
      return o.failStart ? Promise.reject(new Error(`${name} broke`)) : Promise.resolve();
    },
    routes: () => {
      calls.push(`routes ${name}`);
      return o.routes ?? [];
    },
    quiesce: () => {
      calls.push(`quiesce ${name}`);
      return Promise.resolve();
    },
    stop: () => {
      calls.push(`stop ${name}`);
      return o.failStop ? Promise.reject(new Error(`${name} stop broke`)) : Promise.resolve();
    },
  });
  return { calls, plugin };
}

const opts = (beforeStart: (step: string) => void = () => {}, routes = new DeclaredRoutes()) => ({ log: quiet, ownership: new StorageOwnership(), routes, beforeStart });

/** A route group whose routes are named by operationId only (nothing here serves them). */
const group = (name: string, ...ops: string[]): RouteGroup => ({ name, routes: ops.map((operationId) => ({ operationId }) as RouteDef) });

describe('orderPlugins', () => {
  it('puts every plugin after what it depends on, keeping the given order otherwise', () => {
    const { plugin } = recorder();
    const order = orderPlugins([plugin('http', ['commands', 'store']), plugin('store'), plugin('commands', ['store']), plugin('events', ['store'])]).map((p) => p.name);
    expect(order).toEqual(['store', 'commands', 'http', 'events']);
  });

  it('refuses a cycle, an unknown dependency and a duplicate name, naming them', () => {
    const { plugin } = recorder();
    expect(() => orderPlugins([plugin('a', ['b']), plugin('b', ['a'])])).toThrow('plugin dependency cycle: a -> b -> a');
    expect(() => orderPlugins([plugin('a', ['nope'])])).toThrow("plugin 'a' depends on 'nope', which is not composed");
    expect(() => orderPlugins([plugin('a'), plugin('a')])).toThrow("two plugins are named 'a'");
  });
});

describe('startPlugins', () => {
  it('starts in dependency order and stops in reverse: every quiesce, then every stop', async () => {
    const { calls, plugin } = recorder();
    const running = await startPlugins([plugin('b', ['a']), plugin('a'), plugin('c', ['b'])], opts());
    expect(running.order).toEqual(['a', 'b', 'c']);
    await running.stop();
    await running.stop(); // safe twice
    expect(calls.filter((c) => !c.startsWith('routes'))).toEqual(['start a', 'start b', 'start c', 'quiesce c', 'quiesce b', 'quiesce a', 'stop c', 'stop b', 'stop a']);
  });

  it('a start that fails stops every plugin started so far, itself included, in reverse, and names its step', async () => {
    const { calls, plugin } = recorder();
    const err = await startPlugins([plugin('a'), plugin('b', ['a'], { failStart: true }), plugin('c', ['b'])], opts()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PluginStartError);
    expect(err).toMatchObject({ step: 'start.b', message: 'b broke' });
    expect(calls).toEqual(['start a', 'routes a', 'start b', 'quiesce b', 'quiesce a', 'stop b', 'stop a']);
  });

  it('a fault before a step (the test fault point) leaves that plugin unstarted and stops the rest', async () => {
    const { calls, plugin } = recorder();
    const fault = (step: string): void => {
      if (step === 'start.c') throw new Error(`injected test fault at ${step}`);
    };
    await expect(startPlugins([plugin('a'), plugin('b'), plugin('c')], opts(fault))).rejects.toMatchObject({ step: 'start.c' });
    expect(calls).toEqual(['start a', 'routes a', 'start b', 'routes b', 'quiesce b', 'quiesce a', 'stop b', 'stop a']);
  });

  it('a stop hook that throws is logged; the others still run and stop rejects with the first failure', async () => {
    const { calls, plugin } = recorder();
    const lines: string[] = [];
    const log = pino({ level: 'error' }, { write: (l: string) => void lines.push(l) });
    const running = await startPlugins([plugin('a'), plugin('b', [], { failStop: true }), plugin('c')], { ...opts(), log });
    await expect(running.stop()).rejects.toThrow('b stop broke');
    expect(calls.slice(-3)).toEqual(['stop c', 'stop b', 'stop a']);
    expect(lines.join('')).toContain('b: stop failed: b stop broke');
  });

  it('two plugins claiming one database: refused before anything starts', async () => {
    const { calls, plugin } = recorder();
    const both = { databases: ['runs' as const], prefixes: {} };
    await expect(startPlugins([plugin('a', [], { storage: both }), plugin('b', [], { storage: both })], opts())).rejects.toThrow("LMDB database 'runs' is claimed by both a and b");
    expect(calls).toEqual([]);
  });

  it("reads each plugin's routes right after its start, in start order, for the plugin that composes them", async () => {
    const { calls, plugin } = recorder();
    const declared = new DeclaredRoutes();
    let composed: readonly RouteGroup[] = [];
    const running = await startPlugins(
      [
        plugin('http', ['b', 'a'], { onStart: () => (composed = declared.take('http')) }),
        plugin('b', ['a'], { routes: [group('b-group', 'b1')] }),
        plugin('a', [], { routes: [group('a-group', 'a1', 'a2')] }),
      ],
      opts(undefined, declared),
    );
    expect(calls).toEqual(['start a', 'routes a', 'start b', 'routes b', 'start http', 'routes http']);
    expect(composed.map((g) => g.name)).toEqual(['a-group', 'b-group']);
    await running.stop();
  });

  it('a plugin that declares routes after they were composed is refused, naming both, and the start rolls back', async () => {
    const { calls, plugin } = recorder();
    const declared = new DeclaredRoutes();
    const err = await startPlugins(
      [plugin('http', [], { onStart: () => declared.take('http') }), plugin('late', ['http'], { routes: [group('late-group', 'l1')] })],
      opts(undefined, declared),
    ).catch((e: unknown) => e);
    expect(err).toMatchObject({ step: 'start.late', message: "plugin 'late' declares routes but starts after http composed them: make http depend on it" });
    expect(calls.slice(-4)).toEqual(['quiesce late', 'quiesce http', 'stop late', 'stop http']);
  });
});

describe('orderRouteGroups', () => {
  it('lays out the named groups in ROUTE_GROUP_ORDER and puts the others after them, in the order given', () => {
    const ops = orderRouteGroups([group('zz-new', 'z'), group('mcp', 'm'), group('sessions', 's'), group('aa-new', 'a'), group('openapi', 'o')])
      .flatMap((g) => g.routes.map((r) => r.operationId));
    expect(ops).toEqual(['o', 's', 'm', 'z', 'a']);
  });

  it('refuses two groups of one name', () => {
    expect(() => orderRouteGroups([group('faults', 'x'), group('faults', 'y')])).toThrow("two route groups are named 'faults'");
  });
});

describe('a stop hook that never settles after a failed start', () => {
  it('is named in the start error, and the plugins before it still stop', async () => {
    vi.useFakeTimers();
    try {
      const { calls, plugin } = recorder();
      const hung: GatewayPlugin = { ...plugin('hung', ['store']), stop: () => new Promise<void>(() => {}) };
      const failing = startPlugins([plugin('store'), hung, plugin('http', ['hung'], { failStart: true })], opts());
      const settled = failing.catch((err: unknown) => err);
      await vi.advanceTimersByTimeAsync(STOP_PHASE_DEADLINE_MS);
      const err = await settled;
      expect(err).toBeInstanceOf(PluginStartError);
      expect((err as PluginStartError).stuck).toEqual(['hung.stop']);
      expect(calls).toContain('stop store');
    } finally {
      vi.useRealTimers();
    }
  });
});
