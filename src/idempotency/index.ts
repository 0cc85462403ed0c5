/**
 * Idempotent execution of a request (spec Conventions 3). Usage in a route:
 *
 *   return withIdempotency(claims, { actor: auth.apiKeyId, orgId, fleetId, endpoint: 'POST …' },
 *     ctx.idempotencyKey, ctx.body, () => createTheThing());
 *
 * - The key is scoped to actor (API key id), organization, fleet, endpoint and the request body.
 * - The first request claims the key (an LMDB record committed before `run` starts).
 * - A concurrent request with the same key waits while the first runs in this process, then gets its
 *   answer (409 `idempotency_in_progress` only while another process sharing the store runs it).
 * - A completed request with the same key and body replays the stored status and body for 24 h,
 *   also after a restart; the same key with another body is 409.
 * - A failed handler (it throws, or answers 5xx) releases the claim so the request can be retried -
 *   unless its write already committed the answer ({@link IdempotentCommit.inTxn}): then that
 *   committed answer is the response, and the key stays used. A handler that writes records should
 *   commit its answer with them, so that no failure or crash after the commit can free the key for a
 *   second run.
 * - A claim left by a crashed process does not block the key: see {@link IdempotencyClaims.isStale}.
 * - `replayable: false`: the key is used up but the response, which holds a secret, is not stored; a
 *   retry gets 409. `replayAs` (API-key creation): what is stored and replayed is a form of the
 *   response without its secret (a handler committing in its transaction commits that form too).
 */
import type { Logger } from 'pino';
import { apiError } from '../errors/catalog.js';
import type { IdempotencyClaims } from './claims.js';
import { storageKey } from './keys.js';
import { bodyHash, type IdempotencyScope, type StoredReply } from './record.js';

export { IdempotencyClaims } from './claims.js';
export { startIdempotencyPurger, purgeExpired } from './purge.js';
export { BOOT, CLAIM_LEASE_MS, REPLAY_WINDOW_MS, bodyHash, canonicalJson } from './record.js';
export type { IdempotencyRecord, IdempotencyScope, StoredReply, ClaimOwner } from './record.js';

/** Response header set on a replayed response. */
export const REPLAY_HEADER = 'idempotent-replayed';

export interface IdempotencyOptions {
  /** false: the response holds a secret; it is never stored or replayed. Default true. */
  replayable?: boolean;
  /**
   * The form of the response that is stored and replayed, when the response itself must not be (it
   * holds a secret). Wins over `replayable`.
   */
  replayAs?: (result: StoredReply) => StoredReply;
  /** false: a missing header runs the request without idempotency. Default true (missing = 400). */
  required?: boolean;
  /**
   * The request must not wait for a write before it runs (a stop): the key is checked with one
   * synchronous read and the claim is written behind the run (IdempotencyClaims.claimNow).
   */
  urgent?: boolean;
  /** Wall clock (ms), for the 24 h window and claim leases. */
  now?: () => number;
  /** Where a failure after the commit is reported (the answer is the committed one). */
  log?: Logger;
}

/** Given to the handler: commits its answer in the handler's own write transaction. */
export interface IdempotentCommit<R extends StoredReply = StoredReply> {
  /**
   * Call INSIDE the handler's LMDB write transaction, after its checks (and with no write after it
   * that can throw): `reply` becomes this key's answer in the same commit as the records it
   * describes. A crash or error after that commit answers, and replays, `reply`; the handler's final
   * result, when it completes, replaces it.
   */
  inTxn(reply: R): void;
}

/**
 * How many times a duplicate waits for a running first request before answering 409: each wait ends
 * when that request settles, and a new one starts only when a third request claimed the key meanwhile.
 */
const MAX_WAITS = 3;

/** For requests run without a key (`required: false`): there is nothing to record. */
const NO_COMMIT: IdempotentCommit<never> = { inTxn: () => undefined };

/**
 * An `Idempotency-Key`'s shape: 1 to 255 printable ASCII characters without spaces at the ends, what
 * fits an HTTP header value unambiguously (published in /openapi.json).
 */
export const IDEMPOTENCY_KEY_SHAPE = /^[\x21-\x7e](?:[\x20-\x7e]{0,253}[\x21-\x7e])?$/;

/**
 * Runs `run` at most once per (scope, key, body) and replays its result.
 * @throws ApiError 400 `idempotency_key_required` / `idempotency_key_invalid`; 409 on a running
 *   claim, a different body, or a completed non-replayable request; whatever `run` throws
 */
export async function withIdempotency<R extends StoredReply>(
  claims: IdempotencyClaims,
  scope: IdempotencyScope,
  key: string | undefined,
  body: unknown,
  run: (commit: IdempotentCommit<R>) => Promise<R>,
  opts: IdempotencyOptions = {},
): Promise<R> {
  const now = opts.now ?? Date.now;
  if (key === undefined || key === '') {
    if (opts.required === false) return run(NO_COMMIT);
    throw apiError('idempotency_key_required');
  }
  if (!IDEMPOTENCY_KEY_SHAPE.test(key)) throw apiError('idempotency_key_invalid');
  const skey = storageKey(scope, key);
  const hash = bodyHash(body);
  let outcome = opts.urgent === true ? claims.claimNow(skey, hash, now()) : await claims.claim(skey, hash, now());
  // A duplicate of a request this process is running waits for it, then takes its answer (or, when
  // the first failed and released the key, runs as the retry it is). Never two runs at once.
  for (let waited = 0; outcome.kind === 'in_progress' && waited < MAX_WAITS; waited++) {
    const settled = claims.settled(skey);
    if (settled === undefined) break;
    await settled;
    outcome = await claims.claim(skey, hash, now());
  }
  switch (outcome.kind) {
    case 'replay': {
      const { reply } = outcome;
      return asResult<R>({ ...reply, headers: { ...reply.headers, [REPLAY_HEADER]: 'true' } });
    }
    case 'in_progress':
      throw apiError('idempotency_in_progress');
    case 'body_mismatch':
      throw apiError('idempotency_body_mismatch');
    case 'not_replayable':
      throw apiError('idempotency_not_replayable');
    case 'claimed':
      break;
  }
  let committedInTxn = false;
  const commit: IdempotentCommit<R> = {
    inTxn: (reply) => {
      claims.completeInTxn(skey, reply, now());
      committedInTxn = true;
    },
  };
  let result: R;
  try {
    result = await run(commit);
  } catch (err) {
    const committed = await claims.release(skey);
    if (committed === null) throw err;
    opts.log?.error({ err, endpoint: scope.endpoint }, `${scope.endpoint}: failed after its commit, answered with the committed reply`);
    return asResult<R>(committed);
  }
  if (result.status >= 500) {
    const committed = await claims.release(skey);
    if (committed === null) return result;
    opts.log?.warn({ endpoint: scope.endpoint, status: result.status }, `${scope.endpoint}: answered ${result.status} after its commit; answered with the committed reply`);
    return asResult<R>(committed);
  }
  const plain: StoredReply = { status: result.status, body: result.body, ...(result.headers ? { headers: result.headers } : {}) };
  const reply = opts.replayAs !== undefined ? opts.replayAs(plain) : opts.replayable === false ? null : plain;
  try {
    await claims.complete(skey, reply, now(), committedInTxn);
  } catch (err) {
    opts.log?.error({ err, endpoint: scope.endpoint }, `${scope.endpoint}: idempotency record not written; a retry with this key runs again`);
    // The work is done: answer it. Without the record a retry would run again (the claim is stale
    // once this request leaves the in-flight set), which is the best left when LMDB cannot write.
    // (A reply committed in the handler's transaction stays, and is what a retry gets.)
  }
  return result;
}

/**
 * A stored reply as the route's result. It is an answer this same endpoint gave (or committed) for
 * this key: the scope names the endpoint, so the reply has the route's result type.
 */
function asResult<R extends StoredReply>(reply: StoredReply): R {
  return { status: reply.status, body: reply.body, ...(reply.headers ? { headers: reply.headers } : {}) } as R;
}
