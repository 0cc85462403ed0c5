/**
 * What an idempotency key leaves in LMDB (`idempotency` db), and how its storage key and body hash are
 * computed. The storage key is a SHA-256 over the full scope (actor, org, fleet, endpoint, key) so a
 * caller-chosen key of any length or alphabet never becomes an LMDB key itself, and two actors using
 * the same key string never meet.
 */
import { createHash, randomUUID } from 'node:crypto';

/** Who is in the middle of running a claimed request. */
export interface ClaimOwner {
  /** Random per process start: a claim of another boot belongs to a process that may be gone. */
  bootId: string;
  pid: number;
}

/** A response: what an idempotent request answers, and what a retry with the same key and body gets back. */
export interface StoredReply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export interface IdempotencyRecord {
  /** Hash of the canonical JSON of the request body (see {@link bodyHash}). */
  bodyHash: string;
  state: 'running' | 'done';
  /** Set while `running`. */
  owner: ClaimOwner | null;
  /** While `running`: after this instant a claim of another boot is stale even if its pid is alive. */
  leaseUntilMs: number;
  /** `done` only; null when the response is not replayable (it held a secret). */
  reply: StoredReply | null;
  createdAtMs: number;
  /** The record (claim or reply) may be purged after this instant; lookups treat it as absent. */
  expiresAtMs: number;
}

/** Spec Limits: the idempotent replay window. */
export const REPLAY_WINDOW_MS = 24 * 60 * 60 * 1000;
/**
 * How long a running claim of another process start blocks the key when that process still looks
 * alive (its pid is in use). Longer than any handler runs (ack waits are capped at 30 s).
 */
export const CLAIM_LEASE_MS = 5 * 60 * 1000;

/** This process start. */
export const BOOT: ClaimOwner = { bootId: randomUUID(), pid: process.pid };

/** The scope a key is unique in (spec Conventions 3). */
export interface IdempotencyScope {
  /** The caller: API key id. */
  actor: string;
  orgId: string;
  fleetId: string;
  /** Stable endpoint name, e.g. `POST /v1/orgs/{org_id}/fleets/{fleet_id}/mission-templates`. */
  endpoint: string;
}

/** SHA-256 of the canonical JSON of `body` (object keys sorted), so key order never matters. */
export function bodyHash(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body)).digest('hex');
}

/** JSON with object keys sorted recursively; `undefined` (no body) is the empty string. */
export function canonicalJson(value: unknown): string {
  if (value === undefined) return '';
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`;
}

// The databases this module owns, typed on the store (see StoreDatabases in src/store/lmdb.ts).
declare module '../store/lmdb.js' {
  interface StoreDatabases {
    idempotency: IdempotencyRecord;
  }
}
