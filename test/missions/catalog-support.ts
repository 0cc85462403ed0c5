import { pino } from 'pino';
import { identityReads } from '../../src/store/identity-reads.js';
import { FieldRuleDelivery, FieldRuleService } from '../../src/fleet/safety/field-rules/index.js';
import { RobotRegistry } from '../../src/robotlink/registry.js';
import { afterEach } from 'vitest';
/** The catalog routes on the real HTTP stack (test/idempotency/harness.ts), with a controllable runtime. */
import { captureLog } from '../support/capture-log.js';
import { controlOperationRoutes } from '../../src/api/routes/control-operation.js';
import { eventRoutes } from '../../src/api/routes/events.js';
import { featureRoutes } from '../../src/api/routes/features.js';
import { templateRoutes } from '../../src/api/routes/templates.js';
import { NOTHING_ADVERTISED } from '../../src/missions/catalog/robot-capabilities.js';
import { OperationRuntime, type RunEffectReport, type RunEffects } from '../../src/missions/catalog/runtime.js';
import { req, startStack, type Res, type Stack, type StackServices } from '../idempotency/harness.js';

export interface Catalog {
  s: Stack;
  runtime: () => OperationRuntime;
  logs: string[];
  /** While set, the runtime's adoptions wait for it (the 202 pending path). */
  slow: { gate: Promise<void> | null };
  base: string;
  feature(name?: string): Promise<string>;
  template(body?: Record<string, unknown>, idem?: string): Promise<Res>;
  op(body: Record<string, unknown>, key?: string): Promise<Res>;
}

export const square = (lon = 10, lat = 50, d = 0.001) => ({
  type: 'Polygon',
  coordinates: [[[lon, lat], [lon + d, lat], [lon + d, lat + d], [lon, lat + d], [lon, lat]]],
});

/** Records the run effects the operation asked for; optionally fails them. */
export class RecordingEffects implements RunEffects {
  calls: string[] = [];
  fail: string | null = null;
  private async record(what: string, fleetId: string): Promise<RunEffectReport> {
    await Promise.resolve();
    this.calls.push(`${what}:${fleetId}`);
    if (this.fail !== null) throw new Error(this.fail);
    return { count: 0, failures: [] };
  }
  pauseRuns(fleetId: string): Promise<RunEffectReport> {
    return this.record('pause', fleetId);
  }
  resumeRuns(fleetId: string): Promise<RunEffectReport> {
    return this.record('resume', fleetId);
  }
  abortRuns(fleetId: string): Promise<RunEffectReport> {
    return this.record('abort', fleetId);
  }
}

export async function startCatalog(opts: { syncWaitMs?: number } = {}): Promise<Catalog> {
  const logs: string[] = [];
  const slow: Catalog['slow'] = { gate: null };
  let runtime: OperationRuntime | undefined;
  const routes = ({ store, events, idempotency }: StackServices) => {
    runtime?.close();
    runtime = new OperationRuntime(store, {
      syncWaitMs: opts.syncWaitMs ?? 2000,
      beforeAdopt: async () => {
        if (slow.gate) await slow.gate;
      },
      log: captureLog(logs),
    });
    runtime.loadAll();
    const log = captureLog(logs);
    const identity = identityReads(store);
    return [
      ...eventRoutes({ store, identity, events }),
      // No robot is online in this harness: field rule changes are saved and delivered to nobody.
      ...featureRoutes({ store, identity, events, idempotency, fieldRules: new FieldRuleService(store, events, new FieldRuleDelivery({ store, link: new RobotRegistry(pino({ enabled: false })) })) }),
      // No robot connects in this harness either: roster checks read the registrations alone.
      ...templateRoutes({ store, identity, events, idempotency, runtime, advertised: NOTHING_ADVERTISED }),
      ...controlOperationRoutes({ store, identity, events, runtime, advertised: NOTHING_ADVERTISED, log }),
    ];
  };
  const s = await startStack(routes);
  const base = `/v1/orgs/${s.orgId}/fleets/${s.fleetId}`;
  let n = 0;
  const c: Catalog = {
    s,
    runtime: () => runtime!,
    logs,
    slow,
    base,
    async feature(name = 'Field') {
      const r = await req(s, 'POST', `${base}/features`, { body: { name, geometry: square() } });
      if (r.status !== 201) throw new Error(`feature: ${r.status} ${JSON.stringify(r.json)}`);
      return r.json.featureId as string;
    },
    async template(body = {}, idem = `t-${++n}`) {
      const featureId = body.featureId ?? (await c.feature());
      return req(s, 'POST', `${base}/mission-templates`, {
        body: { name: 'Mow', featureId, capabilities: ['mow'], steps: [{ kind: 'cover_area', config: { pattern: 'stripes', spacingM: 0.5 } }], ...body },
        idem,
      });
    },
    op(body, key) {
      return req(s, 'POST', '/v1/agent/control-operation', { body: { org_id: s.orgId, fleet_id: s.fleetId, ...body }, ...(key ? { key } : {}) });
    },
  };
  return c;
}

/**
 * Starts a fresh catalog stack per test: returns the setup function and registers the matching
 * cleanup (release a held runtime gate, close the runtime and the stack) with vitest's afterEach.
 */
export function catalogPerTest(): (opts?: { syncWaitMs?: number }) => Promise<Catalog> {
  const live: Catalog[] = [];
  afterEach(async () => {
    for (const c of live.splice(0)) {
      c.slow.gate = null;
      c.runtime().close();
      await c.s.close();
    }
  });
  return async (opts = {}) => {
    const c = await startCatalog(opts);
    live.push(c);
    return c;
  };
}
