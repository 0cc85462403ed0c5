/**
 * `fleetgw admin …`: identity management straight against the data dir's LMDB. Safe while a server
 * runs on the same dir (LMDB is multi-process); the server reads these records on every request and
 * every robot connect, so changes apply at once.
 */
import { existsSync } from 'node:fs';
import { isKnownPermission, isLivePermission, LIVE_PERMISSIONS } from '../auth/permissions.js';
import { addRobot, createFleet, createOrg, Vda5050IdentityTaken } from '../store/identity.js';
import { createApiKey, revokeApiKey } from '../auth/key-admin.js';
import { parseBindingArgument } from '../fleet/robots/vda5050-identity.js';
import { openStore, type Store } from '../store/lmdb.js';
import { list, opt, parseStrict, positiveInt, req, reqUuid } from './args.js';
import { runAdminList } from './admin-list.js';
import { runAdminUsers } from './admin-users.js';
import { runAdminWebhooks } from './admin-webhooks.js';
import { runAdminVda5050Acl } from './admin-vda5050.js';
import { runBackup, runRestore } from './backup.js';
import { UsageError } from './usage.js';
import { firstOrg, fleetRecord, orgRecord } from '../store/identity-reads.js';

type Out = (line: string) => void;

function print(out: Out, json: boolean, value: Record<string, unknown>, human: string): void {
  out(json ? JSON.stringify(value) : human);
}

async function withStore<T>(dataDir: string, create: boolean, fn: (store: Store) => T | Promise<T>): Promise<T> {
  if (!create && !existsSync(dataDir)) throw new UsageError(`data dir ${dataDir} does not exist (run 'fleetgw admin init' first)`);
  const store = openStore(dataDir);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

/** `--vda5050 MANUFACTURER/SERIAL`, checked topic-safe. */
function vda5050Option(text: string): { manufacturer: string; serialNumber: string } {
  try {
    return parseBindingArgument('--vda5050', text);
  } catch (err: unknown) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
}

/** Runs one admin subcommand; returns the exit code. */
export async function runAdmin(argv: string[], out: Out): Promise<number> {
  const [sub, ...rest] = argv;
  switch (sub) {
    case 'init': {
      const v = parseStrict(rest, { 'data-dir': { type: 'string' }, org: { type: 'string' }, fleet: { type: 'string' }, 'another-org': { type: 'boolean' }, json: { type: 'boolean' } });
      const dataDir = req(v, 'data-dir');
      const orgName = req(v, 'org');
      const fleetName = req(v, 'fleet');
      const r = await withStore(dataDir, true, (store) => {
        // Run twice by mistake, init would mint a second organization with a second full-permission key.
        const existing = firstOrg(store);
        if (existing !== undefined && v['another-org'] !== true) {
          throw new UsageError(`data dir ${dataDir} already has organization '${existing.name}' (${existing.orgId}); see 'fleetgw admin list-orgs', or pass --another-org to add a second one`);
        }
        const org = createOrg(store, orgName);
        const fleet = createFleet(store, org.orgId, fleetName);
        const key = createApiKey(store, { orgId: org.orgId, fleetId: null, permissions: [...LIVE_PERMISSIONS], expiresAtMs: null });
        return { orgId: org.orgId, fleetId: fleet.fleetId, apiKeyId: key.record.apiKeyId, apiKey: key.apiKey };
      });
      print(out, v.json === true, r, `org ${r.orgId}\nfleet ${r.fleetId}\napi key id ${r.apiKeyId}\napi key ${r.apiKey}  (shown once)`);
      return 0;
    }
    case 'create-fleet': {
      const v = parseStrict(rest, { 'data-dir': { type: 'string' }, org: { type: 'string' }, name: { type: 'string' }, json: { type: 'boolean' } });
      const dataDir = req(v, 'data-dir');
      const orgId = reqUuid(v, 'org');
      const name = req(v, 'name');
      const fleetId = await withStore(dataDir, false, (store) => {
        if (!orgRecord(store, orgId)) throw new UsageError(`organization ${orgId} does not exist`);
        return createFleet(store, orgId, name).fleetId;
      });
      print(out, v.json === true, { fleetId }, `fleet ${fleetId}`);
      return 0;
    }
    case 'create-key': {
      const v = parseStrict(rest, {
        'data-dir': { type: 'string' }, org: { type: 'string' }, fleet: { type: 'string' },
        permissions: { type: 'string' }, 'expires-in': { type: 'string' }, json: { type: 'boolean' },
      });
      const dataDir = req(v, 'data-dir');
      const orgId = reqUuid(v, 'org');
      const fleetId = opt(v, 'fleet') === undefined ? null : reqUuid(v, 'fleet');
      const permissions = list(req(v, 'permissions'));
      if (permissions.length === 0) throw new UsageError('--permissions needs at least one permission');
      const unknown = permissions.find((p) => !isKnownPermission(p));
      if (unknown !== undefined) throw new UsageError(`unknown permission '${unknown}'`);
      // A retired permission authorizes no endpoint: granting it would only mislead whoever holds the key.
      const retired = permissions.find((p) => !isLivePermission(p));
      if (retired !== undefined) throw new UsageError(`permission '${retired}' is retired and authorizes nothing; use: ${LIVE_PERMISSIONS.join(', ')}`);
      const expiresIn = positiveInt(opt(v, 'expires-in'), 'expires-in');
      const r = await withStore(dataDir, false, (store) => {
        if (!orgRecord(store, orgId)) throw new UsageError(`organization ${orgId} does not exist`);
        const fleet = fleetId === null ? null : fleetRecord(store, fleetId);
        if (fleetId !== null && (!fleet || fleet.orgId !== orgId)) throw new UsageError(`fleet ${fleetId} is not in organization ${orgId}`);
        const expiresAtMs = expiresIn === undefined ? null : Date.now() + expiresIn * 1000;
        return createApiKey(store, { orgId, fleetId, permissions, expiresAtMs });
      });
      print(out, v.json === true, { apiKeyId: r.record.apiKeyId, apiKey: r.apiKey }, `api key id ${r.record.apiKeyId}\napi key ${r.apiKey}  (shown once)`);
      return 0;
    }
    case 'revoke-key': {
      const v = parseStrict(rest, { 'data-dir': { type: 'string' }, 'key-id': { type: 'string' }, json: { type: 'boolean' } });
      const dataDir = req(v, 'data-dir');
      const keyId = reqUuid(v, 'key-id');
      const found = await withStore(dataDir, false, (store) => revokeApiKey(store, keyId));
      if (!found) throw new UsageError(`no API key ${keyId}`);
      print(out, v.json === true, { apiKeyId: keyId, revoked: true }, `revoked ${keyId}`);
      return 0;
    }
    case 'add-robot': {
      const v = parseStrict(rest, {
        'data-dir': { type: 'string' }, fleet: { type: 'string' }, name: { type: 'string' },
        capabilities: { type: 'string' }, inactive: { type: 'boolean' }, vda5050: { type: 'string' }, json: { type: 'boolean' },
      });
      const dataDir = req(v, 'data-dir');
      const fleetId = reqUuid(v, 'fleet');
      const name = req(v, 'name');
      const capabilities = list(opt(v, 'capabilities'));
      const vdaArg = opt(v, 'vda5050');
      const vda5050 = vdaArg === undefined ? undefined : vda5050Option(vdaArg);
      const r = await withStore(dataDir, false, (store) => {
        if (!fleetRecord(store, fleetId)) throw new UsageError(`fleet ${fleetId} does not exist`);
        try {
          return addRobot(store, { fleetId, name, capabilities, active: v.inactive !== true, ...(vda5050 !== undefined ? { vda5050 } : {}) });
        } catch (err: unknown) {
          if (err instanceof Vda5050IdentityTaken) throw new UsageError(`--vda5050 ${vdaArg}: ${err.message}`);
          throw err;
        }
      });
      print(out, v.json === true, { robotId: r.record.robotId, robotToken: r.robotToken, ...(vda5050 !== undefined ? { vda5050 } : {}) }, `robot ${r.record.robotId}\nrobot token ${r.robotToken}  (shown once)`);
      return 0;
    }
    case 'list-orgs':
    case 'list-fleets':
    case 'list-robots':
    case 'list-keys':
      return runAdminList(sub, rest, out, (dataDir, fn) => withStore(dataDir, false, fn));
    case 'create-user':
    case 'revoke-sessions':
      return runAdminUsers(sub, rest, out);
    case 'webhooks':
      return runAdminWebhooks(rest, out, (dataDir, fn) => withStore(dataDir, false, fn));
    case 'vda5050-acl':
      return runAdminVda5050Acl(rest, out, (dataDir, fn) => withStore(dataDir, false, fn));
    case 'backup':
      return runBackup(rest, out);
    case 'restore':
      return runRestore(rest, out);
    default:
      throw new UsageError(sub === undefined ? 'admin needs a subcommand (init, create-fleet, create-key, revoke-key, add-robot, vda5050-acl, create-user, revoke-sessions, webhooks, backup, restore, list-orgs, list-fleets, list-robots, list-keys)' : `unknown admin subcommand '${sub}'`);
  }
}
