/**
 * User administration by an organization's admins through the API (the dashboard's users panel):
 * list, disable and enable. Creating goes through {@link createUser}, the same code the CLI runs.
 * A disabled user cannot log in, and every session it had is revoked in the same transaction.
 */
import { indexRange } from '../../store/keys.js';
import type { Store } from '../../store/lmdb.js';
import { SESSIONS_BY_USER } from './keys.js';
import { isDisabled, type UserRecord } from './records.js';
import { sessionEnded } from './sessions.js';

/** The organization's users, oldest first. */
export function orgUsers(store: Store, orgId: string): UserRecord[] {
  const out: UserRecord[] = [];
  for (const { value } of store.users.getRange()) if (value.orgId === orgId) out.push(value);
  return out.sort((a, b) => a.createdAtMs - b.createdAtMs || (a.userId < b.userId ? -1 : 1));
}

/**
 * Disables (`disabled` true) or enables a user of `orgId`. Disabling revokes each live session of
 * the user in the same transaction, so no request of it passes after the answer. Setting the state
 * it already has changes nothing.
 * @returns the record after the change, or undefined when the org has no such user
 */
export async function setUserDisabled(store: Store, orgId: string, userId: string, disabled: boolean, nowMs: number): Promise<UserRecord | undefined> {
  return store.root.transaction(() => {
    const u = store.users.get(userId);
    if (u === undefined || u.orgId !== orgId) return undefined;
    if (isDisabled(u) === disabled) return u;
    const next: UserRecord = { ...u, disabledAtMs: disabled ? nowMs : null };
    store.users.putSync(userId, next);
    if (disabled) {
      for (const id of indexRange(store, `${SESSIONS_BY_USER}/${userId}`)) {
        const s = store.sessions.get(id);
        if (s !== undefined && sessionEnded(s, nowMs) === null) store.sessions.putSync(id, { ...s, revokedAtMs: nowMs, revokedReason: 'user_disabled' });
      }
    }
    return next;
  });
}
