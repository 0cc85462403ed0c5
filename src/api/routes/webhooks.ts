/**
 * Alert webhooks of an organization (docs/webhooks.md): create, list, remove, and the dead letters.
 * Organization admins only: a user session with role `admin`, or an organization-wide API key with
 * `fleet:write` (a fleet-bound key or a lesser role gets 403 `org_admin_required`).
 *
 * Create requires `Idempotency-Key`; its 201 carries the signing secret once, and a replay answers 200
 * with the webhook and `secretWithheld: true` (the stored reply never holds the secret, as for API keys).
 */
import type { Logger } from 'pino';
import { requireOrg } from '../../auth/access.js';
import { apiError } from '../../errors/catalog.js';
import { withIdempotency, type IdempotencyClaims, type StoredReply } from '../../idempotency/index.js';
import type { Store } from '../../store/lmdb.js';
import {
  newWebhook, orgDeadLetterKeyset, orgWebhookKeyset, putWebhookInTxn, removeWebhook, urlOrigin, webhookView, WebhookInputError,
  type DeadLetterRecord, type WebhookRecord,
} from '../../webhooks/index.js';
import { defineRoute } from '../define-route.js';
import { defineOrgList } from '../list-reader.js';
import type { AuthContext, RouteDef } from '../route.js';
import type { WebhookView} from '../schemas/webhooks.js';
import {
  DEAD_LETTERS_LIMIT, WEBHOOK_BODY_MAX_BYTES, DeadLetterList, DeadLetterQuery, type DeadLetterView, WEBHOOKS_LIMIT, WebhookCreated, WebhookCreateReplay, WebhookCreateRequest,
  WebhookList, WebhookListQuery, WebhookOrgParams, WebhookPathParams
} from '../schemas/webhooks.js';

export interface WebhookRouteDeps {
  store: Store;
  idempotency: IdempotencyClaims;
  log?: Logger;
}

const BASE = '/v1/orgs/{org_id}/webhooks';
const tags = ['Webhooks'];
const NO_STORE = { 'cache-control': 'no-store' };

/** Organization admins only (module comment). */
function requireOrgAdmin(auth: AuthContext, orgId: string): void {
  requireOrg(auth, orgId);
  const admin = auth.user !== undefined ? auth.user.role === 'admin' : auth.fleetId === null && auth.permissions.includes('fleet:write');
  if (!admin) throw apiError('org_admin_required');
}

function deadLetterView(d: DeadLetterRecord): DeadLetterView {
  return {
    deadLetterId: d.deadLetterId, webhookId: d.webhookId, urlOrigin: d.urlOrigin, alertId: d.alertId, alertKind: d.alertKind, change: d.change,
    reason: d.reason, attempts: d.attempts, lastError: d.lastError, firstAttemptAtMs: d.firstAttemptAtMs, deadAtMs: d.deadAtMs, body: d.body,
  };
}

function withheld(reply: StoredReply): StoredReply {
  const body = reply.body as WebhookCreated;
  const replay: WebhookCreateReplay = { webhook: body.webhook, secretWithheld: true };
  return { status: 200, body: replay, headers: NO_STORE };
}

/** The webhook routes. */
export function webhookRoutes(deps: WebhookRouteDeps): RouteDef[] {
  const { store, idempotency } = deps;
  const log = deps.log?.child({ component: 'webhooks' });
  const hooks = defineOrgList<{ org_id: string } & WebhookListQuery, WebhookRecord, WebhookView>({
    kind: 'webhooks', limit: WEBHOOKS_LIMIT, filters: () => ({}), source: (orgId) => orgWebhookKeyset(store, orgId), view: webhookView,
  });
  const deadLetters = defineOrgList<{ org_id: string } & DeadLetterQuery, DeadLetterRecord, DeadLetterView>({
    kind: 'webhook-dead-letters', limit: DEAD_LETTERS_LIMIT, filters: () => ({}), source: (orgId) => orgDeadLetterKeyset(store, orgId), view: deadLetterView,
  });
  return [
    defineRoute({
      method: 'POST',
      path: BASE,
      operationId: 'createWebhook',
      summary: 'Send the organization\'s alerts to a URL, signed. The signing secret is in this answer only; a replay answers 200 without it.',
      tags,
      auth: 'any',
      params: WebhookOrgParams,
      body: WebhookCreateRequest,
      maxBodyBytes: WEBHOOK_BODY_MAX_BYTES,
      idempotencyKey: 'required',
      errors: ['forbidden_org', 'org_admin_required', 'invalid_body'],
      responses: {
        201: { description: 'Created; `signingSecret` is shown only here.', schema: WebhookCreated },
        200: { description: 'A replay of a completed create (same Idempotency-Key and body): the webhook as created, the secret withheld.', schema: WebhookCreateReplay },
      },
    }).handle(
      ({ auth, params, body, idempotencyKey, nowMs }) => {
        requireOrgAdmin(auth, params.org_id);
        return withIdempotency(
          idempotency,
          { actor: auth.apiKeyId, orgId: auth.orgId, fleetId: '', endpoint: `POST ${BASE}` },
          idempotencyKey,
          body,
          async (commit) => {
            let made: { record: WebhookRecord; secret: string };
            try {
              made = newWebhook(store, auth.orgId, {
                url: body.url, name: body.name ?? null, format: body.format ?? 'fleetgw', routingKey: body.pagerduty_routing_key ?? null, kinds: body.kinds ?? null,
                ...(body.max_attempts !== undefined ? { maxAttempts: body.max_attempts } : {}),
                ...(body.initial_backoff_ms !== undefined ? { initialBackoffMs: body.initial_backoff_ms } : {}),
                ...(body.timeout_ms !== undefined ? { timeoutMs: body.timeout_ms } : {}),
              }, nowMs);
            } catch (err: unknown) {
              if (err instanceof WebhookInputError) throw apiError('invalid_body', { detail: err.message });
              throw err;
            }
            const { record, secret } = made;
            const created = { status: 201 as const, body: { webhook: webhookView(record), signingSecret: secret }, headers: NO_STORE };
            await store.root.transaction(() => {
              putWebhookInTxn(store, record);
              // The committed (and replayed) answer is the secret-free 200 (as for API keys).
              commit.inTxn(withheld(created) as never);
            });
            log?.info({ webhookId: record.webhookId, orgId: record.orgId, url: urlOrigin(record.url), format: record.format, by: auth.apiKeyId }, 'webhook created');
            return created;
          },
          { replayAs: withheld },
        );
      },
    ),
    defineRoute({
      method: 'GET',
      path: BASE,
      operationId: 'listWebhooks',
      summary: 'The organization\'s webhooks, without secrets (the URL as its origin only).',
      tags,
      auth: 'any',
      params: WebhookOrgParams,
      query: WebhookListQuery,
      errors: ['forbidden_org', 'org_admin_required', 'cursor_invalid'],
      responses: { 200: { description: 'The webhooks.', schema: WebhookList } },
    }).handle(
      ({ auth, params, query }) => {
        requireOrgAdmin(auth, params.org_id);
        const out: WebhookList = hooks.read(auth, { ...params, ...query });
        return { status: 200, body: out };
      },
    ),
    defineRoute({
      method: 'DELETE',
      path: `${BASE}/{webhook_id}`,
      operationId: 'removeWebhook',
      summary: 'Remove a webhook: nothing more is sent to it (deliveries waiting to retry are dropped). Its dead letters stay.',
      tags,
      auth: 'any',
      params: WebhookPathParams,
      errors: ['forbidden_org', 'org_admin_required', 'webhook_not_found'],
      responses: { 204: { description: 'Removed.' } },
    }).handle(
      async ({ auth, params }) => {
        requireOrgAdmin(auth, params.org_id);
        if (!(await removeWebhook(store, auth.orgId, params.webhook_id))) throw apiError('webhook_not_found', { webhookId: params.webhook_id });
        log?.info({ webhookId: params.webhook_id, orgId: auth.orgId, by: auth.apiKeyId }, 'webhook removed');
        return { status: 204, body: null };
      },
    ),
    defineRoute({
      method: 'GET',
      path: '/v1/orgs/{org_id}/webhook-dead-letters',
      operationId: 'listWebhookDeadLetters',
      summary: 'Alert deliveries given up (attempts exhausted, queue full, gateway stopped), newest first; at most 1000 kept per organization.',
      tags,
      auth: 'any',
      params: WebhookOrgParams,
      query: DeadLetterQuery,
      errors: ['forbidden_org', 'org_admin_required', 'cursor_invalid'],
      responses: { 200: { description: 'The dead letters.', schema: DeadLetterList } },
    }).handle(
      ({ auth, params, query }) => {
        requireOrgAdmin(auth, params.org_id);
        const out: DeadLetterList = deadLetters.read(auth, { ...params, ...query });
        return { status: 200, body: out };
      },
    ),
  ];
}
