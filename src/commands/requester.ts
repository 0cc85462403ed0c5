/**
 * Who asked for a command: one shape per kind of actor, stored on the command record and shown as
 * `requestedBy` by the audit reads (docs/commands.md, "Who asked"). A user session is recorded by its
 * user (never by its session id, which is a credential); the fleet operation's run effects by the
 * operation; a schedule's fires by the schedule.
 */

/** The actor of a command, by kind. */
export type Requester =
  | { actorType: 'api_key'; apiKeyId: string }
  | { actorType: 'user'; userId: string }
  | { actorType: 'operation'; operationId: string }
  | { actorType: 'schedule'; scheduleId: string }
  | { actorType: 'system' };

/**
 * The shape records written by earlier versions carry: the acting credential's id only, with the
 * placeholder `operation` for the fleet operation's run effects.
 */
export interface LegacyRequester {
  apiKeyId: string;
}

/** What a stored command record may hold (records are never rewritten for this; see {@link requesterOnRead}). */
export type StoredRequester = Requester | LegacyRequester;

/** The placeholder earlier versions stored for commands of the fleet operation. */
const LEGACY_OPERATION = 'operation';

/**
 * The requester of a command asked for by an authenticated caller: its user for a session, its key
 * otherwise.
 */
export function requesterOfCaller(auth: { actorType: 'api_key' | 'user'; apiKeyId: string; user?: { userId: string } }): Requester {
  return auth.actorType === 'user' && auth.user !== undefined
    ? { actorType: 'user', userId: auth.user.userId }
    : { actorType: 'api_key', apiKeyId: auth.apiKeyId };
}

/** What mapping a legacy record needs to know. */
export interface RequesterLookups {
  /** The fleet's operation id, or undefined when it has none. */
  operationIdOf(fleetId: string): string | undefined;
  /** The user of a stored session id, or undefined when the id names no stored session. */
  userOfSession(sessionId: string): string | undefined;
}

/**
 * The requester of a stored record in its current shape. A legacy record maps, for the `operation`
 * placeholder, to the fleet's operation (`system` when the fleet has none any more); for the id of a
 * session still stored, to its user; else to `api_key` with its id.
 */
export function requesterOnRead(stored: StoredRequester, fleetId: string, lookups: RequesterLookups): Requester {
  if ('actorType' in stored) return stored;
  if (stored.apiKeyId === LEGACY_OPERATION) {
    const operationId = lookups.operationIdOf(fleetId);
    return operationId === undefined ? { actorType: 'system' } : { actorType: 'operation', operationId };
  }
  const userId = lookups.userOfSession(stored.apiKeyId);
  return userId === undefined ? { actorType: 'api_key', apiKeyId: stored.apiKeyId } : { actorType: 'user', userId };
}
