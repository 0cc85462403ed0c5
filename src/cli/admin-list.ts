/**
 * `fleetgw admin list-orgs | list-fleets | list-robots | list-keys`: what the data dir holds, so an
 * operator can find the ids every other admin command takes. Read straight from LMDB like the other
 * admin commands (also while a server runs on the dir). Each record is printed from an allow-list of
 * fields: no secret and no digest of one (token and key hashes) is ever printed.
 */
import type { Store } from '../store/lmdb.js';
import { opt, parseStrict, req, reqUuid } from './args.js';
import { UsageError } from './usage.js';
import { allFleets, allOrgs, allRobots, fleetRecord, orgRecord } from '../store/identity-reads.js';
import { allApiKeys } from '../auth/api-keys.js';

type Out = (line: string) => void;
type WithStore = <T>(dataDir: string, fn: (store: Store) => T) => Promise<T>;

export type ListSubcommand = 'list-orgs' | 'list-fleets' | 'list-robots' | 'list-keys';

/** An optional UUID filter option. */
function uuidFilter(v: Record<string, string | boolean | undefined>, name: string): string | undefined {
  return opt(v, name) === undefined ? undefined : reqUuid(v, name);
}

function iso(ms: number | null | undefined): string | null {
  return typeof ms === 'number' ? new Date(ms).toISOString() : null;
}

/** Prints `rows` as one JSON document `{[key]: rows}`, or a header line and one tab-separated line per row. */
function print(out: Out, json: boolean, key: string, rows: Record<string, unknown>[], columns: [string, (r: Record<string, unknown>) => string][]): void {
  if (json) {
    out(JSON.stringify({ [key]: rows }));
    return;
  }
  out(columns.map(([h]) => h).join('\t'));
  for (const r of rows) out(columns.map(([, f]) => f(r)).join('\t'));
}

/** Runs one `list-*` subcommand; returns the exit code. */
export async function runAdminList(sub: ListSubcommand, argv: string[], out: Out, withStore: WithStore): Promise<number> {
  const spec: Record<string, { type: 'string' | 'boolean' }> = { 'data-dir': { type: 'string' }, json: { type: 'boolean' } };
  if (sub !== 'list-orgs') spec.org = { type: 'string' };
  if (sub === 'list-robots') spec.fleet = { type: 'string' };
  const v = parseStrict(argv, spec);
  const dataDir = req(v, 'data-dir');
  const json = v.json === true;
  const orgId = uuidFilter(v, 'org');
  const fleetId = uuidFilter(v, 'fleet');
  const text = (k: string) => (r: Record<string, unknown>): string => {
    const value = r[k];
    return typeof value === 'string' ? value : '-';
  };
  switch (sub) {
    case 'list-orgs': {
      const rows = await withStore(dataDir, (store) => allOrgs(store).map((o) => ({ orgId: o.orgId, name: o.name, createdAt: iso(o.createdAtMs) })));
      print(out, json, 'orgs', rows, [['org_id', text('orgId')], ['name', text('name')], ['created', text('createdAt')]]);
      return 0;
    }
    case 'list-fleets': {
      const rows = await withStore(dataDir, (store) => {
        if (orgId !== undefined && !orgRecord(store, orgId)) throw new UsageError(`organization ${orgId} does not exist`);
        return allFleets(store).filter((f) => orgId === undefined || f.orgId === orgId)
          .map((f) => ({ fleetId: f.fleetId, orgId: f.orgId, name: f.name, createdAt: iso(f.createdAtMs) }));
      });
      print(out, json, 'fleets', rows, [['fleet_id', text('fleetId')], ['org_id', text('orgId')], ['name', text('name')], ['created', text('createdAt')]]);
      return 0;
    }
    case 'list-robots': {
      const rows = await withStore(dataDir, (store) => {
        if (orgId !== undefined && !orgRecord(store, orgId)) throw new UsageError(`organization ${orgId} does not exist`);
        if (fleetId !== undefined && !fleetRecord(store, fleetId)) throw new UsageError(`fleet ${fleetId} does not exist`);
        return allRobots(store)
          .filter((r) => (orgId === undefined || r.orgId === orgId) && (fleetId === undefined || r.fleetId === fleetId))
          .map((r) => ({ robotId: r.robotId, fleetId: r.fleetId, orgId: r.orgId, name: r.name, active: r.active, capabilities: [...r.capabilities], vda5050: r.vda5050 === undefined ? null : { ...r.vda5050 }, createdAt: iso(r.createdAtMs) }));
      });
      print(out, json, 'robots', rows, [
        ['robot_id', text('robotId')], ['fleet_id', text('fleetId')], ['name', text('name')],
        ['active', (r) => (r.active === true ? 'yes' : 'no')], ['capabilities', (r) => (r.capabilities as string[]).join(',') || '-'],
        ['vda5050', (r) => { const b = r.vda5050 as { manufacturer: string; serialNumber: string } | null; return b === null ? '-' : `${b.manufacturer}/${b.serialNumber}`; }],
      ]);
      return 0;
    }
    case 'list-keys': {
      const now = Date.now();
      const rows = await withStore(dataDir, (store) => {
        if (orgId !== undefined && !orgRecord(store, orgId)) throw new UsageError(`organization ${orgId} does not exist`);
        return allApiKeys(store).filter((k) => orgId === undefined || k.orgId === orgId).map((k) => ({
          apiKeyId: k.apiKeyId,
          orgId: k.orgId,
          fleetId: k.fleetId,
          name: k.name ?? null,
          permissions: [...k.permissions],
          state: k.revokedAtMs !== null ? 'revoked' : k.expiresAtMs !== null && k.expiresAtMs <= now ? 'expired' : 'active',
          createdAt: iso(k.createdAtMs),
          expiresAt: iso(k.expiresAtMs),
          revokedAt: iso(k.revokedAtMs),
          createdBy: k.createdBy?.email ?? null,
        }));
      });
      print(out, json, 'keys', rows, [
        ['api_key_id', text('apiKeyId')], ['state', text('state')], ['org_id', text('orgId')],
        ['fleet_id', (r) => (typeof r.fleetId === 'string' ? r.fleetId : 'all')], ['permissions', (r) => (r.permissions as string[]).join(',')],
        ['expires', text('expiresAt')], ['name', text('name')],
      ]);
      return 0;
    }
  }
}
