/** LMDB key shapes of the user accounts and sessions `index` entries (auth owns these prefixes). */

/** `index` key prefix: `usersByEmail/<encoded email>/<userId>`. */
export const USERS_BY_EMAIL = 'usersByEmail';
/** `index` key prefix: `sessionsByUser/<userId>/<sessionId>`. */
export const SESSIONS_BY_USER = 'sessionsByUser';

/** The email's index segment: lower-cased and URI-encoded, so a `/` in it cannot split the key. */
export function emailKey(email: string): string {
  return encodeURIComponent(email.trim().toLowerCase());
}
