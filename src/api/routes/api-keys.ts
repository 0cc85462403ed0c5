/**
 * API-key management under `/v1/orgs/{org_id}/api-keys` (docs/sessions.md): create, list, read,
 * revoke. Only a user session may call them (spec Authentication 4): an API key gets 403.
 *
 * Create requires `Idempotency-Key`. The 201 answer carries the raw key once. A replay (same key and
 * body within 24 h, also after a restart) answers 200 `ApiKeyCreateReplay`: the key record as created
 * and `secretWithheld: true`, never the secret (the stored reply never held it: it is committed in
 * the same transaction as the key record, src/idempotency `replayAs`).
 *
 * Every create and revoke is a `api_key.created` / `api_key.revoked` event (who, permissions, fleet;
 * no secret) on the timelines of the fleets the key reaches (correlation id = key id), and a log line.
 */
import { apiKeyRecord, checkUserKeyRequest, newUserKey, orgKeysOf, putUserKeyInTxn, revokeUserKey, type KeyMinter, type UserKeyRequest } from '../../auth/api-keys.js';
import { requireOrg } from '../../auth/access.js';
import type { EventLog } from '../../events/index.js';
import { apiError } from '../../errors/catalog.js';
import { withIdempotency, type IdempotencyClaims, type StoredReply } from '../../idempotency/index.js';
import type { Static } from '@sinclair/typebox';
import type { Logger } from 'pino';
import type { Store } from '../../store/lmdb.js';
import type { ApiKeyRecord } from '../../store/records.js';
import { defineRoute } from '../define-route.js';
import { defineOrgList } from '../list-reader.js';
import { appendOrgEvent } from '../org-timeline.js';
import type { AuthContext, RouteDef } from '../route.js';
import {
  ApiKeyCreated,
  ApiKeyCreateReplay,
  ApiKeyCreateRequest,
  API_KEYS_LIMIT,
  ApiKeyList,
  ApiKeyListQuery,
  ApiKeyPathParams,
  ApiKeyView,
  OrgPathParams,
} from '../schemas/api-keys.js';
import { SMALL_BODY_MAX_BYTES } from '../schemas/control-robot.js';

export interface ApiKeyRouteDeps {
  store: Store;
  events: EventLog;
  idempotency: IdempotencyClaims;
  log?: Logger;
}

const BASE = '/v1/orgs/{org_id}/api-keys';
const tags = ['API keys'];
const NO_STORE = { 'cache-control': 'no-store' };

/** The public view of a key record: never its secret or digest. */
export function apiKeyView(k: ApiKeyRecord, nowMs: number): ApiKeyView {
  const state = k.revokedAtMs !== null ? 'revoked' : k.expiresAtMs !== null && nowMs >= k.expiresAtMs ? 'expired' : 'active';
  return {
    apiKeyId: k.apiKeyId,
    orgId: k.orgId,
    fleetId: k.fleetId,
    name: k.name ?? null,
    permissions: [...k.permissions],
    state,
    createdAtMs: k.createdAtMs,
    expiresAtMs: k.expiresAtMs,
    revokedAtMs: k.revokedAtMs,
    createdBy: k.createdBy ? { userId: k.createdBy.userId, email: k.createdBy.email } : null,
  };
}

/** The user behind the calling session (the router lets only sessions in: `actors: 'user'`). */
function minter(auth: AuthContext): KeyMinter {
  if (auth.user === undefined) throw apiError('session_required');
  return { userId: auth.user.userId, email: auth.user.email, role: auth.user.role, orgId: auth.orgId };
}

/** What a replay of a create answers: the record as created, the secret withheld. */
function withheld(reply: StoredReply): StoredReply {
  const body = reply.body as ApiKeyCreated;
  const replay: ApiKeyCreateReplay = { key: body.key, secretWithheld: true };
  return { status: 200, body: replay, headers: NO_STORE };
}

/** The key-management routes. */
export function apiKeyRoutes(deps: ApiKeyRouteDeps): RouteDef[] {
  const { store, events, idempotency } = deps;
  const log = deps.log?.child({ component: 'api-keys' });
  // A key's view depends on the time (its state turns `expired`), hence one list per request.
  const keyList = (nowMs: number) =>
    defineOrgList<Static<typeof OrgPathParams> & ApiKeyListQuery, ApiKeyRecord, ApiKeyView>({
      kind: 'api-keys',
      limit: API_KEYS_LIMIT,
      filters: () => ({}),
      source: (orgId) => orgKeysOf(store, orgId),
      view: (k) => apiKeyView(k, nowMs),
    });
  const keyEvent = (k: ApiKeyRecord, kind: string, by: KeyMinter, atMs: number): void => {
    appendOrgEvent(events, store, {
      orgId: k.orgId,
      fleetId: k.fleetId,
      correlationId: k.apiKeyId,
      kind,
      subject: { type: 'api_key', id: k.apiKeyId },
      atMs,
      data: { by: { userId: by.userId, email: by.email, role: by.role }, name: k.name ?? null, fleetId: k.fleetId, permissions: [...k.permissions], expiresAtMs: k.expiresAtMs },
    });
    log?.info({ apiKeyId: k.apiKeyId, orgId: k.orgId, userId: by.userId }, `${kind}: api key`);
  };
  return [
    defineRoute({
      method: 'POST',
      path: BASE,
      operationId: 'createApiKey',
      summary: 'Mint an API key with at most the caller\'s role\'s permissions. The raw key is in this answer only; a replay answers 200 without it.',
      tags,
      auth: 'any',
      actors: 'user',
      params: OrgPathParams,
      body: ApiKeyCreateRequest,
      maxBodyBytes: SMALL_BODY_MAX_BYTES,
      idempotencyKey: 'required',
      errors: ['forbidden_org', 'fleet_not_found', 'role_lacks_permission'],
      responses: {
        201: { description: 'Created; `secret` is the raw key, shown only here.', schema: ApiKeyCreated },
        200: { description: 'A replay of a completed create (same Idempotency-Key and body): the key as created, the secret withheld.', schema: ApiKeyCreateReplay },
      },
    }).handle(
      ({ auth, params, body, idempotencyKey, nowMs }) => {
        requireOrg(auth, params.org_id);
        const by = minter(auth);
        const req: UserKeyRequest = {
          name: body.name ?? null,
          fleetId: body.fleet_id ?? null,
          permissions: body.permissions,
          expiresAtMs: body.expires_in_s === undefined ? null : nowMs + body.expires_in_s * 1000,
        };
        return withIdempotency(
          idempotency,
          { actor: by.userId, orgId: by.orgId, fleetId: req.fleetId ?? '', endpoint: `POST ${BASE}` },
          idempotencyKey,
          body,
          async (commit) => {
            checkUserKeyRequest(store, by, req);
            const { record, apiKey } = newUserKey(by, req, nowMs);
            const created = { status: 201 as const, body: { key: apiKeyView(record, nowMs), secret: apiKey }, headers: NO_STORE };
            await store.root.transaction(() => {
              putUserKeyInTxn(store, record);
              // The committed (and replayed) answer is the secret-free 200, not this handler's 201: the
              // commit's type names the handler's own result, hence the cast.
              commit.inTxn(withheld(created) as never);
            });
            keyEvent(record, 'api_key.created', by, nowMs);
            return created;
          },
          { replayAs: withheld },
        );
      },
    ),
    defineRoute({
      method: 'GET',
      path: BASE,
      operationId: 'listApiKeys',
      summary: 'The organization\'s API keys, oldest first, without secrets.',
      tags,
      auth: 'any',
      actors: 'user',
      params: OrgPathParams,
      query: ApiKeyListQuery,
      errors: ['forbidden_org', 'cursor_invalid'],
      responses: { 200: { description: 'The keys.', schema: ApiKeyList } },
    }).handle(
      ({ auth, params, query, nowMs }) => {
        const out: ApiKeyList = keyList(nowMs).read(auth, { ...params, ...query });
        return { status: 200, body: out };
      },
    ),
    defineRoute({
      method: 'GET',
      path: `${BASE}/{api_key_id}`,
      operationId: 'getApiKey',
      summary: 'One API key of the organization, without its secret.',
      tags,
      auth: 'any',
      actors: 'user',
      params: ApiKeyPathParams,
      errors: ['forbidden_org', 'api_key_not_found'],
      responses: { 200: { description: 'The key.', schema: ApiKeyView } },
    }).handle(
      ({ auth, params, nowMs }) => {
        requireOrg(auth, params.org_id);
        const k = apiKeyRecord(store, params.api_key_id);
        if (k === undefined || k.orgId !== auth.orgId) throw apiError('api_key_not_found', { apiKeyId: params.api_key_id });
        return { status: 200, body: apiKeyView(k, nowMs) };
      },
    ),
    defineRoute({
      method: 'DELETE',
      path: `${BASE}/{api_key_id}`,
      operationId: 'revokeApiKey',
      summary: 'Revoke an API key (its creator or an admin): refused on REST and its telemetry streams closed within 1 s. Revoking a revoked key answers it unchanged.',
      tags,
      auth: 'any',
      actors: 'user',
      params: ApiKeyPathParams,
      errors: ['forbidden_org', 'api_key_not_found', 'api_key_not_yours'],
      responses: { 200: { description: 'The key, revoked.', schema: ApiKeyView } },
    }).handle(
      async ({ auth, params, nowMs }) => {
        requireOrg(auth, params.org_id);
        const by = minter(auth);
        const { record, changed } = await revokeUserKey(store, by, params.api_key_id, nowMs);
        if (changed) keyEvent(record, 'api_key.revoked', by, nowMs);
        return { status: 200, body: apiKeyView(record, nowMs) };
      },
    ),
  ];
}
