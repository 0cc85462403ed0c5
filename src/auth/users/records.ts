/**
 * User accounts and their browser sessions, as kept in LMDB (`users`, `sessions`; index keys in
 * `index`). msgpack-safe only. No secret appears: passwords as scrypt digests, session secrets as
 * SHA-256 digests.
 */
import type { Role } from './roles.js';

/** A memory-hard password digest (password.ts); parameters stored so they can be raised later. */
export interface PasswordDigest {
  alg: 'scrypt';
  /** scrypt cost (CPU/memory), a power of two. */
  N: number;
  r: number;
  p: number;
  salt: Uint8Array;
  hash: Uint8Array;
}

export interface UserRecord {
  userId: string;
  orgId: string;
  /** Lower-cased; unique across the gateway (login takes only email and password). */
  email: string;
  role: Role;
  password: PasswordDigest;
  createdAtMs: number;
  /** Set when an admin disabled the account (no login, no session); absent or null: enabled. */
  disabledAtMs?: number | null;
}

export interface SessionRecord {
  /** Public id (UUID); the cookie carries it with the secret. */
  sessionId: string;
  userId: string;
  orgId: string;
  /** SHA-256 of the session secret. */
  secretHash: Uint8Array;
  createdAtMs: number;
  /** Last request seen (written at most once per touch interval: sessions.ts). */
  lastSeenAtMs: number;
  /** Idle timeout in force for this session (ms). */
  idleTimeoutMs: number;
  /** Absolute end, whatever the activity. */
  expiresAtMs: number;
  revokedAtMs: number | null;
  /** `logout`, `admin`, `superseded` (too many sessions). */
  revokedReason: string | null;
}

// The databases this module owns, typed on the store (see StoreDatabases in src/store/lmdb.ts).
declare module '../../store/lmdb.js' {
  interface StoreDatabases {
    users: UserRecord;
    sessions: SessionRecord;
  }
}

/** Whether the user is disabled (records written before accounts could be disabled have no field: enabled). */
export function isDisabled(u: Pick<UserRecord, 'disabledAtMs'>): boolean {
  return u.disabledAtMs !== undefined && u.disabledAtMs !== null;
}
