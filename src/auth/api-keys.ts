/**
 * API keys minted and revoked by users through REST (docs/sessions.md); `fleetgw admin` keeps its own
 * path in src/store/identity.ts. Revocation is the same record change `fleetgw admin revoke-key`
 * makes (`revokedAtMs`), so the same guarantees hold: refused on REST within the verifier's 250 ms
 * window, open telemetry streams closed by the 250 ms key-revocation sweep.
 */
import { apiError } from '../errors/catalog.js';
import { sortableNumber } from '../store/keys.js';
import { keysetOverSorted, type Keyset } from '../store/keyset.js';
import type { Store } from '../store/lmdb.js';
import type { ApiKeyRecord } from '../store/records.js';
import { newKeyRecord } from './key-admin.js';
import { canRevokeAnyKey, ROLE_PERMISSIONS, type Role } from './users/roles.js';
import { cachedFleet } from '../store/identity-reads.js';

export interface KeyMinter {
  userId: string;
  email: string;
  role: Role;
  orgId: string;
}

export interface UserKeyRequest {
  name: string | null;
  fleetId: string | null;
  permissions: readonly string[];
  expiresAtMs: number | null;
}

/**
 * Checks a user's key request: every permission within the user's role, the fleet in the user's
 * organization.
 * @throws ApiError 403 `role_lacks_permission` naming the first permission beyond the role; 404 `fleet_not_found`
 */
export function checkUserKeyRequest(store: Store, by: KeyMinter, req: UserKeyRequest): void {
  const allowed = ROLE_PERMISSIONS[by.role];
  const beyond = req.permissions.find((p) => !allowed.includes(p as (typeof allowed)[number]));
  if (beyond !== undefined) throw apiError('role_lacks_permission', { role: by.role, permission: beyond });
  if (req.fleetId !== null) {
    const fleet = cachedFleet(store, req.fleetId);
    if (!fleet || fleet.orgId !== by.orgId) throw apiError('fleet_not_found', { fleetId: req.fleetId });
  }
}

/**
 * Builds a new key record for a checked request (the caller writes it in its own transaction).
 * @returns the record and the raw key, which is never stored
 */
export function newUserKey(by: KeyMinter, req: UserKeyRequest, nowMs: number): { record: ApiKeyRecord; apiKey: string } {
  const { record, apiKey } = newKeyRecord({ orgId: by.orgId, fleetId: req.fleetId, permissions: req.permissions, expiresAtMs: req.expiresAtMs }, nowMs);
  return { record: { ...record, name: req.name, createdBy: { userId: by.userId, email: by.email } }, apiKey };
}

/** Inside the caller's write transaction: stores a new key record built by {@link newUserKey}. */
export function putUserKeyInTxn(store: Store, record: ApiKeyRecord): void {
  store.apikeys.putSync(record.apiKeyId, record);
}

/**
 * The keys of an organization as a keyset, oldest first (creation time, then id). Reads every key record
 * (the `apikeys` db has no per-organization index; a gateway holds hundreds of keys, not millions) and
 * pages the sorted result.
 */
export function orgKeysOf(store: Store, orgId: string): Keyset<ApiKeyRecord> {
  const items: ApiKeyRecord[] = [];
  for (const { value } of store.apikeys.getRange()) if (value.orgId === orgId) items.push(value);
  const position = (k: ApiKeyRecord): string => `${sortableNumber(k.createdAtMs)}/${k.apiKeyId}`;
  items.sort((a, b) => (position(a) < position(b) ? -1 : 1));
  return keysetOverSorted(items, position);
}

/**
 * Revokes a key of `by`'s organization: its creator or an admin may. Revoking a revoked key changes
 * nothing and answers the record as it is (idempotent).
 * @throws ApiError 404 `api_key_not_found` (missing or another organization); 403 `api_key_not_yours`
 * @returns the record as written (or found already revoked), and whether this call revoked it
 */
export async function revokeUserKey(store: Store, by: KeyMinter, apiKeyId: string, nowMs: number): Promise<{ record: ApiKeyRecord; changed: boolean }> {
  return store.root.transaction(() => {
    const rec = store.apikeys.get(apiKeyId);
    if (rec === undefined || rec.orgId !== by.orgId) throw apiError('api_key_not_found', { apiKeyId });
    if (!canRevokeAnyKey(by.role) && rec.createdBy?.userId !== by.userId) throw apiError('api_key_not_yours', { apiKeyId });
    if (rec.revokedAtMs !== null) return { record: rec, changed: false };
    const next = { ...rec, revokedAtMs: nowMs };
    store.apikeys.putSync(apiKeyId, next);
    return { record: next, changed: true };
  });
}

/** The key record `apiKeyId`, or undefined. */
export function apiKeyRecord(store: Pick<Store, 'apikeys'>, apiKeyId: string): ApiKeyRecord | undefined {
  return store.apikeys.get(apiKeyId);
}

/** Every key record, in id order (`fleetgw admin list-keys`). */
export function allApiKeys(store: Pick<Store, 'apikeys'>): ApiKeyRecord[] {
  return [...store.apikeys.getRange()].map((e) => e.value);
}
