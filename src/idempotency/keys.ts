/**
 * LMDB key shapes of the idempotency module: the `idempotency` db's storage key and the `idemExpiry`
 * index entries. Private to src/idempotency (its claims and purge build and read them).
 */
import { createHash } from 'node:crypto';
import type { IdempotencyScope } from './record.js';

/** The LMDB key for (scope, key): hex SHA-256, fixed length. */
export function storageKey(scope: IdempotencyScope, key: string): string {
  const h = createHash('sha256');
  // Length-prefixed parts: no concatenation of two different tuples can collide.
  for (const part of [scope.actor, scope.orgId, scope.fleetId, scope.endpoint, key]) {
    h.update(`${part.length}:`).update(part);
  }
  return h.digest('hex');
}

/** Expiry index entries in `store.index`: `idemExpiry/<expiresAtMs 16 hex>/<storageKey>`. */
export const EXPIRY_PREFIX = 'idemExpiry';

/** The expiry index entry of a storage key: purge walks them in expiry order. */
export function expiryKey(expiresAtMs: number, key: string): string {
  return `${EXPIRY_PREFIX}/${expiresAtMs.toString(16).padStart(16, '0')}/${key}`;
}
