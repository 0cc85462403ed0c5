/**
 * API keys minted and revoked by `fleetgw admin` (another process, writing synchronously so that a key
 * is durable before it is printed) and by the tests that provision them. Keys minted by users through
 * REST are in api-keys.ts; both write the same records, owned by this module.
 */
import type { Store } from '../store/lmdb.js';
import { fleetRecord, orgRecord } from '../store/identity-reads.js';
import type { ApiKeyRecord } from '../store/records.js';
import { mintApiKey } from '../store/secrets.js';

export interface NewKeyOptions {
  orgId: string;
  fleetId: string | null;
  permissions: readonly string[];
  expiresAtMs: number | null;
}

/** A new key record (the raw key is returned once and never stored); the caller writes it. */
export function newKeyRecord(opts: NewKeyOptions, now: number): { record: ApiKeyRecord; apiKey: string } {
  const minted = mintApiKey();
  const record: ApiKeyRecord = {
    apiKeyId: minted.apiKeyId,
    orgId: opts.orgId,
    fleetId: opts.fleetId,
    permissions: [...new Set(opts.permissions)],
    secretHash: minted.secretHash,
    createdAtMs: now,
    expiresAtMs: opts.expiresAtMs,
    revokedAtMs: null,
  };
  return { record, apiKey: minted.apiKey };
}

/** Mints an API key; the raw key is returned once and never stored. */
export function createApiKey(store: Store, opts: NewKeyOptions, now = Date.now()): { record: ApiKeyRecord; apiKey: string } {
  if (!orgRecord(store, opts.orgId)) throw new Error(`organization ${opts.orgId} does not exist`);
  if (opts.fleetId !== null) {
    const fleet = fleetRecord(store, opts.fleetId);
    if (!fleet || fleet.orgId !== opts.orgId) throw new Error(`fleet ${opts.fleetId} does not exist in organization ${opts.orgId}`);
  }
  const { record, apiKey } = newKeyRecord(opts, now);
  store.apikeys.putSync(record.apiKeyId, record);
  return { record, apiKey };
}

/** Revokes a key; returns false when no such key exists. Revoking twice keeps the first time. */
export function revokeApiKey(store: Store, apiKeyId: string, now = Date.now()): boolean {
  return store.root.transactionSync(() => {
    const rec = store.apikeys.get(apiKeyId);
    if (!rec) return false;
    if (rec.revokedAtMs === null) store.apikeys.putSync(apiKeyId, { ...rec, revokedAtMs: now });
    return true;
  });
}
