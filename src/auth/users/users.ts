/**
 * User accounts in LMDB: created by `fleetgw admin create-user` (another process), read by the
 * server at login and on every session-authenticated request.
 */
import { randomUUID } from 'node:crypto';
import { indexRange } from '../../store/keys.js';
import type { Store } from '../../store/lmdb.js';
import { hashPassword } from './password.js';
import { emailKey, USERS_BY_EMAIL } from './keys.js';
import type { UserRecord } from './records.js';
import type { Role } from './roles.js';
import { orgRecord } from '../../store/identity-reads.js';

/** Thrown by {@link createUser} for input it refuses (the CLI prints the message). */
export class UserInputError extends Error {}

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}$/;

export interface NewUser {
  orgId: string;
  email: string;
  role: Role;
  password: string;
}

/**
 * Creates a user. The password is hashed first (asynchronous scrypt), then the record and its email
 * index entry are written in one transaction that also checks the email is still free.
 * @throws UserInputError for an unknown organization, a malformed or taken email
 */
export async function createUser(store: Store, u: NewUser, nowMs = Date.now()): Promise<UserRecord> {
  const email = u.email.trim().toLowerCase();
  if (!EMAIL.test(email)) throw new UserInputError(`'${u.email}' is not an email address`);
  if (!orgRecord(store, u.orgId)) throw new UserInputError(`organization ${u.orgId} does not exist`);
  const password = await hashPassword(u.password);
  const user: UserRecord = { userId: randomUUID(), orgId: u.orgId, email, role: u.role, password, createdAtMs: nowMs };
  const created = await store.root.transaction(() => {
    if (findUserIdByEmail(store, email) !== undefined) return false;
    store.users.putSync(user.userId, user);
    store.index.putSync(`${USERS_BY_EMAIL}/${emailKey(email)}/${user.userId}`, true);
    return true;
  });
  if (!created) throw new UserInputError(`a user with email ${email} already exists`);
  return user;
}

/** The id of the user with `email` (any case), or undefined. */
export function findUserIdByEmail(store: Store, email: string): string | undefined {
  return indexRange(store, `${USERS_BY_EMAIL}/${emailKey(email)}`)[0];
}

/** The user with `email` (any case), or undefined. */
export function findUserByEmail(store: Store, email: string): UserRecord | undefined {
  const id = findUserIdByEmail(store, email);
  return id === undefined ? undefined : store.users.get(id);
}

/** The user `userId`, or undefined. */
export function userRecord(store: Pick<Store, 'users'>, userId: string): UserRecord | undefined {
  return store.users.get(userId);
}
