/**
 * `fleetgw admin create-user` and `fleetgw admin revoke-sessions` (docs/sessions.md), straight
 * against the data dir's LMDB like the other admin commands: safe beside a running server, which
 * reads users and sessions on every request (a revocation applies to the next request).
 */
import { existsSync } from 'node:fs';
import { MAX_PASSWORD_BYTES, MIN_PASSWORD_CHARS } from '../auth/users/password.js';
import { isRole, ROLES } from '../auth/users/roles.js';
import { revokeUserSessions } from '../auth/users/sessions.js';
import { createUser, findUserByEmail, UserInputError } from '../auth/users/users.js';
import { openStore, type Store } from '../store/lmdb.js';
import { parseStrict, req, reqUuid } from './args.js';
import { readNewPassword } from './password-input.js';
import { UsageError } from './usage.js';

type Out = (line: string) => void;

async function withStore<T>(dataDir: string, fn: (store: Store) => Promise<T>): Promise<T> {
  if (!existsSync(dataDir)) throw new UsageError(`data dir ${dataDir} does not exist (run 'fleetgw admin init' first)`);
  const store = openStore(dataDir);
  try {
    return await fn(store);
  } catch (err: unknown) {
    if (err instanceof UserInputError) throw new UsageError(err.message);
    throw err;
  } finally {
    await store.close();
  }
}

/** True for `--password` / `--password=…` anywhere in argv. */
function passwordArgument(argv: string[]): boolean {
  return argv.some((a) => a === '--password' || a.startsWith('--password='));
}

/** Runs `create-user` or `revoke-sessions`; returns the exit code. */
export async function runAdminUsers(sub: 'create-user' | 'revoke-sessions', argv: string[], out: Out): Promise<number> {
  if (sub === 'create-user') {
    if (passwordArgument(argv)) {
      throw new UsageError('--password is refused: an argument is visible to every user of the host (ps) and kept in shell history; pipe the password on stdin or type it at the prompt');
    }
    const v = parseStrict(argv, { 'data-dir': { type: 'string' }, org: { type: 'string' }, email: { type: 'string' }, role: { type: 'string' }, json: { type: 'boolean' } });
    const dataDir = req(v, 'data-dir');
    const orgId = reqUuid(v, 'org');
    const email = req(v, 'email');
    const role = req(v, 'role');
    if (!isRole(role)) throw new UsageError(`--role must be one of ${ROLES.join(', ')}`);
    const password = await readNewPassword(MAX_PASSWORD_BYTES);
    if ([...password].length < MIN_PASSWORD_CHARS) throw new UsageError(`the password must have at least ${MIN_PASSWORD_CHARS} characters`);
    if (Buffer.byteLength(password) > MAX_PASSWORD_BYTES) throw new UsageError(`the password must be at most ${MAX_PASSWORD_BYTES} bytes`);
    const user = await withStore(dataDir, (store) => createUser(store, { orgId, email, role, password }));
    const r = { userId: user.userId, orgId: user.orgId, email: user.email, role: user.role };
    out(v.json === true ? JSON.stringify(r) : `user ${r.userId}\nemail ${r.email}\nrole ${r.role}`);
    return 0;
  }
  const v = parseStrict(argv, { 'data-dir': { type: 'string' }, email: { type: 'string' }, json: { type: 'boolean' } });
  const dataDir = req(v, 'data-dir');
  const email = req(v, 'email');
  const r = await withStore(dataDir, async (store) => {
    const user = findUserByEmail(store, email);
    if (user === undefined) throw new UsageError(`no user with email ${email}`);
    return { userId: user.userId, revoked: await revokeUserSessions(store, user.userId, 'admin', Date.now()) };
  });
  out(v.json === true ? JSON.stringify(r) : `revoked ${r.revoked} sessions of user ${r.userId}`);
  return 0;
}
